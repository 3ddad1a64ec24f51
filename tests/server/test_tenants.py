"""Tokens map to tenants: a token sees and acts on its tenant's runs only. Another tenant's
run is a 404 (as if it did not exist) on every endpoint; no or a wrong token is a 401."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import (
    ACME,
    GLOBEX,
    TOKENS,
    LiveServer,
    echo_script,
    live_server,
    make_config,
    start_run,
    tasks_folder,
    wait_finished,
    write_script,
    ws_connect,
    ws_events,
)
from websockets.exceptions import ConnectionClosedError

from loopwright.events import ToolCallEvent
from loopwright.server import server_runtime
from loopwright.store import SqliteRunStore
from loopwright.tools import ToolThreads


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    config = make_config(tmp_path, tokens=TOKENS, tasks_dir=tasks_folder(tmp_path))
    with live_server(config) as live:
        yield live


@pytest.fixture
def acme_gated(server: LiveServer) -> tuple[str, str]:
    """An acme task run waiting at its gate: (run_id, gate request id)."""
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "a"}}, ACME)["run_id"]
    gate = ws_events(server, run_id, token="acme-token-1234", until="confirmation_required")[-1]
    return run_id, str(gate["request_id"])


Call = Callable[[LiveServer, str, str, dict[str, str]], httpx.Response]

ENDPOINTS: dict[str, Call] = {
    "get run": lambda s, r, g, h: httpx.get(f"{s.url}/api/runs/{r}", headers=h),
    "events json": lambda s, r, g, h: httpx.get(f"{s.url}/api/runs/{r}/events", headers=h),
    "events sse": lambda s, r, g, h: httpx.get(
        f"{s.url}/api/runs/{r}/events", headers={**h, "Accept": "text/event-stream"}
    ),
    "cancel": lambda s, r, g, h: httpx.post(f"{s.url}/api/runs/{r}/cancel", headers=h),
    "gate": lambda s, r, g, h: httpx.post(
        f"{s.url}/api/runs/{r}/gates/{g}", json={"approve": True}, headers=h
    ),
    "resume": lambda s, r, g, h: httpx.post(f"{s.url}/api/runs/{r}/resume", headers=h),
}


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
def test_another_tenants_run_is_not_found(
    server: LiveServer, acme_gated: tuple[str, str], endpoint: str
) -> None:
    run_id, gate_id = acme_gated
    response = ENDPOINTS[endpoint](server, run_id, gate_id, GLOBEX)
    assert response.status_code == 404
    assert response.json()["error"]["message"] == f"no run {run_id!r}"
    unknown = ENDPOINTS[endpoint](server, "run_doesnotexist", gate_id, GLOBEX)
    assert unknown.status_code == 404  # the same answer as for a run that does not exist
    assert unknown.json()["error"]["message"] == "no run 'run_doesnotexist'"
    # and nothing happened to acme's run: still live, still waiting at its gate
    run = httpx.get(f"{server.url}/api/runs/{run_id}", headers=ACME).json()
    assert run["live"] is True
    assert [g["request_id"] for g in run["pending_gates"]] == [gate_id]


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
def test_every_endpoint_needs_a_known_token(
    server: LiveServer, acme_gated: tuple[str, str], endpoint: str
) -> None:
    run_id, gate_id = acme_gated
    missing = ENDPOINTS[endpoint](server, run_id, gate_id, {})
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    wrong = ENDPOINTS[endpoint](server, run_id, gate_id, {"Authorization": "Bearer nope-nope-nope"})
    assert wrong.status_code == 401 and wrong.json()["error"]["message"] == "unknown token"


def test_the_websocket_of_another_tenants_run_is_not_found(
    server: LiveServer, acme_gated: tuple[str, str]
) -> None:
    run_id, _ = acme_gated
    for token, code in (("globex-token-5678", 4404), (None, 4401), ("wrong-token-000", 4401)):
        with (
            ws_connect(server, run_id, token=token) as ws,
            pytest.raises(ConnectionClosedError) as closed,
        ):
            ws.recv(timeout=20)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == code
    # the owner gets its events
    assert ws_events(server, run_id, token="acme-token-1234", until="confirmation_required")


def test_a_gate_cannot_be_decided_by_another_tenant_over_the_websocket(
    server: LiveServer, acme_gated: tuple[str, str]
) -> None:
    run_id, gate_id = acme_gated
    with (
        ws_connect(server, run_id, token="globex-token-5678") as ws,
        pytest.raises(ConnectionClosedError),
    ):
        ws.send(json.dumps({"type": "confirm", "request_id": gate_id, "approve": True}))
        ws.recv(timeout=20)
    run = httpx.get(f"{server.url}/api/runs/{run_id}", headers=ACME).json()
    assert [g["request_id"] for g in run["pending_gates"]] == [gate_id]


def test_lists_and_new_runs_belong_to_the_callers_tenant(
    server: LiveServer, acme_gated: tuple[str, str], tmp_path: Path
) -> None:
    acme_run, _ = acme_gated
    spec = echo_script(tmp_path / "g.json", 1)
    globex_run = start_run(server, {"prompt": "p", "model": spec, "tools": ["echo"]}, GLOBEX)
    assert globex_run["tenant"] == "globex"
    wait_finished(server, globex_run["run_id"], GLOBEX)
    acme_list = httpx.get(f"{server.url}/api/runs", headers=ACME).json()["runs"]
    globex_list = httpx.get(f"{server.url}/api/runs", headers=GLOBEX).json()["runs"]
    assert [r["run_id"] for r in acme_list] == [acme_run]
    assert [r["run_id"] for r in globex_list] == [globex_run["run_id"]]
    assert httpx.get(f"{server.url}/api/runs").status_code == 401
    assert httpx.post(f"{server.url}/api/runs", json={"prompt": "p"}).status_code == 401
    assert httpx.get(f"{server.url}/api/info", headers=GLOBEX).json()["tenant"] == "globex"
    assert httpx.get(f"{server.url}/api/info").status_code == 401


def test_the_owner_can_act_on_its_run(server: LiveServer, acme_gated: tuple[str, str]) -> None:
    run_id, gate_id = acme_gated
    ok = ENDPOINTS["gate"](server, run_id, gate_id, ACME)
    assert ok.status_code == 200
    run: dict[str, Any] = wait_finished(server, run_id, ACME)
    assert run["status"] == "completed"


def test_the_servers_runtime_runs_each_tenants_sync_tools_in_its_own_pool(
    tmp_path: Path,
) -> None:
    """`loopwright serve`'s Runtime (server_runtime) chooses each run's pool by its tenant."""
    tools = Path(__file__).parents[1] / "features" / "tenant_tools.py"
    store = SqliteRunStore(tmp_path / "runs.db")
    config = make_config(tmp_path, tokens=TOKENS, store=store)
    config.runtime = server_runtime(store)
    config.allowed_tools = frozenset({*config.allowed_tools, f"{tools}:where"})
    call = {"thought": "look", "action": "where", "action_input": {}}
    script = write_script(tmp_path / "where.json", [json.dumps(call), '{"final_answer": "ok"}'])
    with live_server(config) as live:
        body = {"prompt": "where?", "model": script, "tools": [f"{tools}:where"]}
        run_id = start_run(live, body, ACME)["run_id"]
        assert wait_finished(live, run_id, ACME)["status"] == "completed"
    (done,) = [e for e in store.events(run_id) if isinstance(e, ToolCallEvent)]
    assert done.result == f"tools-acme-1 acme {run_id}"
    pool = config.runtime.embedded.tool_threads("acme")
    assert isinstance(pool, ToolThreads) and pool.max_workers == 4  # docs/server.md's number
