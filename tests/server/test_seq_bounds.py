"""A seq a client writes (a model call's path, SSE's `Last-Event-ID`, a WebSocket's
`after`) never reaches the SQLite store as an integer it cannot hold: a number beyond any
seq is a 404 (no such model call) or a 422 naming the field, and so is a digit that is not
ASCII (`²`), never a 500 or a stream cut with a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import LiveServer, echo_script, live_server, make_config, start_run
from server_helpers import wait_finished as finished
from websockets.exceptions import ConnectionClosedError

from loopwright.store import SqliteRunStore

HUGE = "99999999999999999999"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    store = SqliteRunStore(tmp_path / "runs.db")
    with live_server(make_config(tmp_path, store=store)) as live:
        yield live
    store.close()


@pytest.fixture
def run_id(server: LiveServer, tmp_path: Path) -> str:
    spec = echo_script(tmp_path / "s.json", 1)
    started = start_run(server, {"prompt": "q", "model": spec, "tools": ["echo"]})
    finished(server, started["run_id"])
    return str(started["run_id"])


def test_a_model_call_beyond_any_seq_is_a_404(server: LiveServer, run_id: str) -> None:
    response = httpx.get(f"{server.url}/api/runs/{run_id}/model_calls/{HUGE}")
    assert response.status_code == 404, response.text
    assert f"has no model call at event {HUGE}" in response.json()["error"]["message"]
    for odd in ("²", "١٢"):
        response = httpx.get(f"{server.url}/api/runs/{run_id}/model_calls/{odd}")
        assert response.status_code == 422, response.text
        assert response.json()["error"]["field"] == "seq"


@pytest.mark.parametrize("last_id", [HUGE, "9" * 400, "²"])
def test_a_bad_last_event_id_is_a_422(server: LiveServer, run_id: str, last_id: str) -> None:
    # Last-Event-ID: a number beyond any seq cut the stream with a traceback
    headers = {b"Accept": b"text/event-stream", b"Last-Event-ID": last_id.encode("latin-1")}
    response = httpx.get(f"{server.url}/api/runs/{run_id}/events", headers=headers)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == "Last-Event-ID"


def test_a_websocket_after_beyond_any_seq_is_refused(server: LiveServer, run_id: str) -> None:
    from websockets.sync.client import connect

    with (
        connect(f"{server.ws_url}/api/runs/{run_id}/ws?after={HUGE}") as ws,
        pytest.raises(ConnectionClosedError) as closed,
    ):
        ws.recv(timeout=20)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4422
    assert "after" in closed.value.rcvd.reason
