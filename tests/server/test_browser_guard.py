"""A web page on another site cannot drive the server through the user's browser: requests
and WebSockets from another Origin are refused, and on loopback only loopback host names
are answered (DNS rebinding). Clients that send no Origin (scripts, the CLI) are unaffected."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import LiveServer, echo_script, live_server, make_config, start_run
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin

from loopwright.server._guard import host_name


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_server(make_config(tmp_path)) as live:
        yield live


def test_a_cross_site_post_is_refused(server: LiveServer, tmp_path: Path) -> None:
    spec = echo_script(tmp_path / "s.json", 0)
    evil = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
    response = httpx.post(
        f"{server.url}/api/runs", content=f'{{"prompt": "p", "model": "{spec}"}}', headers=evil
    )
    assert response.status_code == 403
    assert (
        "cross-site request from 'http://evil.example' refused"
        in response.json()["error"]["message"]
    )
    assert httpx.get(f"{server.url}/api/runs").json()["runs"] == []
    same_site = httpx.post(
        f"{server.url}/api/runs",
        json={"prompt": "p", "model": spec},
        headers={"Origin": server.url},
    )
    assert same_site.status_code == 201


def test_a_cross_site_websocket_is_refused(server: LiveServer, tmp_path: Path) -> None:
    run_id = start_run(server, {"prompt": "p", "model": echo_script(tmp_path / "s.json", 0)})[
        "run_id"
    ]
    url = f"{server.ws_url}/api/runs/{run_id}/ws"
    with pytest.raises(InvalidStatus) as refused:
        connect(url, origin=Origin("http://evil.example"), open_timeout=20)
    assert refused.value.response.status_code == 403
    with connect(url, origin=Origin(server.url), open_timeout=20) as ws:
        assert '"type":"run_started"' in str(ws.recv(timeout=20))


def test_a_rebound_host_name_is_refused_on_loopback(server: LiveServer) -> None:
    response = httpx.get(
        f"{server.url}/api/runs", headers={"Host": f"attacker.example:{server.port}"}
    )
    assert response.status_code == 403
    assert "host 'attacker.example" in response.json()["error"]["message"]
    for name in ("localhost", "127.0.0.1"):
        ok = httpx.get(f"{server.url}/api/runs", headers={"Host": f"{name}:{server.port}"})
        assert ok.status_code == 200


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:8765", "127.0.0.1"),
        ("[::1]:8765", "::1"),
        ("LocalHost", "localhost"),
        ("::1", "::1"),
    ],
)
def test_host_names(header: str, name: str) -> None:
    assert host_name(header) == name
