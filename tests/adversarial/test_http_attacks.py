"""§5 of the hardening review: hostile API clients against a real server on loopback.

A uvicorn server in a thread on a free port; requests over real sockets (httpx, and a raw
socket for a body cut short).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from loopwright.events import RunStartedEvent
from loopwright.runtime import Runtime
from loopwright.server import ServerConfig, create_app
from loopwright.testing import InMemoryRunStore

PLAIN = Path(__file__).parent / "plain_tools.py"
TOKENS = {"acme-token-1234": "acme", "globex-token-5678": "globex"}
ACME = {"Authorization": "Bearer acme-token-1234"}


class Served:
    def __init__(self, config: ServerConfig) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.store = config.runtime.store
        app = create_app(config)
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[self.sock])), daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


def script(path: Path, replies: list[Any]) -> str:
    path.write_text(json.dumps([json.dumps(r) for r in replies]))
    return f"scripted:{path}"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Served, Path]]:
    (tmp_path / "ws").mkdir()
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    config = ServerConfig(
        runtime=Runtime(InMemoryRunStore()),
        tokens=TOKENS,
        workspace=str(tmp_path / "ws"),
        allowed_models=frozenset({f"scripted:{allowed}/*", "ollama:*"}),
        allowed_tools=frozenset({"echo", f"{PLAIN}:thread_name"}),
    )
    server = Served(config)
    try:
        yield server, allowed
    finally:
        server.stop()


def post(server: Served, body: Any) -> httpx.Response:
    return httpx.post(f"{server.url}/api/runs", headers=ACME, timeout=10, json=body)


def post_raw(server: Served, text: str) -> httpx.Response:
    headers = {**ACME, "Content-Type": "application/json"}
    return httpx.post(f"{server.url}/api/runs", headers=headers, timeout=10, content=text)


def test_a_client_cannot_make_the_server_read_a_file(
    served: tuple[Served, Path], tmp_path: Path
) -> None:
    server, allowed = served
    private = tmp_path / "private.json"
    private.write_text(json.dumps(["the private file's content"]))
    answers = []
    for spec in (
        f"scripted:{private}",  # exists
        f"scripted:{tmp_path}/missing.json",  # does not
        f"scripted:{allowed}/../private.json",  # climbs out of the allowed folder
        "scripted:/etc/passwd",
        "local:/etc/passwd",
        "ollama:../../etc/passwd",
    ):
        response = post(server, {"prompt": "p", "model": spec})
        assert response.status_code == 422, response.text
        assert "private file" not in response.text and "root:" not in response.text
        answers.append(response.json()["error"]["message"])
    assert len(set(answers)) == 1  # the same answer: nothing says whether a path exists
    assert "not offered by this server" in answers[0] and str(tmp_path) not in answers[0]


def test_an_allowed_model_runs_and_blocking_tools_use_the_tenants_pool(
    served: tuple[Served, Path],
) -> None:
    server, allowed = served
    spec = script(
        allowed / "s.json",
        [{"thought": "which thread", "action": "thread_name", "action_input": {}},
         {"thought": "done", "final_answer": "ok"}],
    )  # fmt: skip
    response = post(server, {"prompt": "p", "model": spec, "tools": [f"{PLAIN}:thread_name"]})
    assert response.status_code == 201, response.text
    run_id = response.json()["run_id"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        events = httpx.get(f"{server.url}/api/runs/{run_id}/events", headers=ACME).json()
        calls = [e for e in events["events"] if e["type"] == "tool_call"]
        if calls:
            break
        time.sleep(0.05)
    assert calls and calls[0]["result"].startswith("tools-acme-"), calls


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused_and_listings_stay_up(
    served: tuple[Served, Path], number: str
) -> None:
    server, _ = served
    body = '{"prompt": "p", "options": {"temperature": ' + number + "}}"
    response = post_raw(server, body)
    assert response.status_code == 422, response.text
    assert "number" in response.json()["error"]["message"]
    assert httpx.get(f"{server.url}/api/runs", headers=ACME).status_code == 200


def test_a_stored_non_finite_value_renders_as_null(served: tuple[Served, Path]) -> None:
    server, _ = served
    started = RunStartedEvent(
        run_id="run_nan", seq=1, ts=1.0, request="r", kind="agent", model="m", tools=[],
        options={"temperature": float("nan")}, tenant="acme",
    )  # fmt: skip
    server.store.append(started)  # stored by a writer that did not check it
    response = httpx.get(f"{server.url}/api/runs/run_nan/events", headers=ACME)
    assert response.status_code == 200, response.text
    [shown] = response.json()["events"]
    assert shown["options"] == {"temperature": None}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('{"prompt": "p", "options": ' + "[" * 100_000 + "]" * 100_000 + "}", "nests deeper"),
        ('{"prompt": "p", "options": ' + "[" * 70 + "]" * 70 + "}", "nests deeper"),
        ('{"prompt": "\\ud800 lone"}', "lone surrogate"),
        ('{"prompt": "p", "\\udfff": 1}', "lone surrogate"),
        ('{"prompt": "p", "options": {"max_iterations": 1' + "0" * 5000 + "}}", "number"),
    ],
)
def test_hostile_json_is_a_400_with_a_message(
    served: tuple[Served, Path], body: str, says: str
) -> None:
    server, _ = served
    response = post_raw(server, body)
    assert response.status_code == 400, response.text[:500]
    assert says in response.json()["error"]["message"]


def test_an_aborted_body_is_one_log_line(
    served: tuple[Served, Path], caplog: pytest.LogCaptureFixture
) -> None:
    server, _ = served
    host, port = server.url.removeprefix("http://").split(":")
    caplog.set_level(logging.WARNING)
    for _ in range(3):
        with socket.create_connection((host, int(port))) as raw:
            raw.sendall(
                b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Authorization: Bearer acme-token-1234\r\nContent-Type: application/json\r\n"
                b'Content-Length: 1000\r\n\r\n{"prompt": "cut'
            )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        lines = [r for r in caplog.records if "went away during the body" in r.getMessage()]
        if len(lines) == 3:
            break
        time.sleep(0.05)
    assert len(lines) == 3, [r.getMessage() for r in caplog.records]
    assert not [r for r in caplog.records if r.exc_info]  # no traceback logged
    assert httpx.get(f"{server.url}/api/runs", headers=ACME).status_code == 200
