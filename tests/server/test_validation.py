"""Bad requests get a 4xx JSON error that says what is wrong and names the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import (
    LiveServer,
    echo_script,
    live_server,
    make_config,
    start_run,
    tasks_folder,
    wait_finished,
    ws_events,
)
from websockets.exceptions import ConnectionClosedError


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp_path = tmp_path_factory.mktemp("validation")
    with live_server(make_config(tmp_path, tasks_dir=tasks_folder(tmp_path))) as live:
        yield live


BAD_RUN_BODIES: list[tuple[Any, int, str | None, str]] = [
    ({"prompt": 42}, 422, "prompt", "non-empty string"),
    ({"prompt": "  "}, 422, "prompt", "non-empty string"),
    ({"prompt": "p", "tools": "echo"}, 422, "tools", "list"),
    ({"prompt": "p", "tools": [1]}, 422, "tools[0]", "string"),
    ({"prompt": "p", "tools": ["echo", "rm_rf"]}, 422, "tools[1]", "not offered"),
    ({"prompt": "p", "tools": ["run_command"]}, 422, "tools[0]", "not offered"),
    ({"prompt": "p", "options": []}, 422, "options", "object"),
    ({"prompt": "p", "options": {"max_iterations": "5"}}, 422, "options.max_iterations", "int"),
    ({"prompt": "p", "options": {"max_iterations": True}}, 422, "options.max_iterations", "int"),
    ({"prompt": "p", "options": {"turbo": 1}}, 422, "options.turbo", "unknown option"),
    ({"prompt": "p", "options": {"last_turn": "no"}}, 422, "options.last_turn", "bool"),
    ({"prompt": "p", "options": {"last_turn": 0}}, 422, "options.last_turn", "bool"),
    ({"prompt": "p", "options": {"tier": "huge"}}, 422, "options", "unknown tier"),
    ({"prompt": "p", "options": {"max_iterations": 0}}, 422, "options", "at least 1"),
    ({"prompt": "p", "model": 7}, 422, "model", "string"),
    ({"prompt": "p", "model": "warp:drive"}, 422, "model", "not offered by this server"),
    (
        {"prompt": "p", "model": "scripted:/no/such/file.json"},
        422,
        "model",
        "not offered by this server",
    ),  # never opened
    ({"prompt": "p", "inputs": {}}, 422, "inputs", "unknown field"),
    ({"prompt": "p", "task": "publish-notes"}, 422, None, "either 'request'"),
    ({"request": "p", "task": "publish-notes"}, 422, None, "either 'request'"),
    ({}, 422, None, "either 'request'"),
    ({"request": "p", "prompt": "p"}, 422, "prompt", "not both"),
    ({"request": " "}, 422, "request", "non-empty string"),
    ({"task": ""}, 422, "task", "non-empty string"),
    ({"task": "nope"}, 422, "task", "no task 'nope'"),
    ({"task": "publish-notes"}, 422, "inputs.title", "required"),
    ({"task": "publish-notes", "inputs": []}, 422, "inputs", "object"),
    (
        {"task": "publish-notes", "inputs": {"title": "t", "color": "red"}},
        422,
        "inputs.color",
        "no such input",
    ),
    ({"task": "publish-notes", "prompt_extra": 1}, 422, "prompt_extra", "unknown field"),
    ([1, 2], 400, None, "JSON object"),
]


@pytest.mark.parametrize(("body", "status", "field", "says"), BAD_RUN_BODIES)
def test_bad_run_bodies(
    server: LiveServer, body: Any, status: int, field: str | None, says: str
) -> None:
    before = len(httpx.get(f"{server.url}/api/runs").json()["runs"])
    response = httpx.post(f"{server.url}/api/runs", json=body)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error.get("field") == field
    assert says in error["message"]
    assert len(httpx.get(f"{server.url}/api/runs").json()["runs"]) == before  # nothing started


@pytest.mark.parametrize(
    ("raw", "says"),
    [(b"", "empty"), (b"{not json", "not valid JSON"), (b"\xff\xfe", "not valid JSON")],
)
def test_bodies_that_are_not_json(server: LiveServer, raw: bytes, says: str) -> None:
    response = httpx.post(
        f"{server.url}/api/runs", content=raw, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert says in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "approve"),
        ({"approve": "yes"}, "approve"),
        ({"approve": 1}, "approve"),
        ({"approve": True, "why": "x"}, "why"),
    ],
)
def test_bad_gate_bodies(server: LiveServer, body: dict[str, Any], field: str) -> None:
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "v"}})["run_id"]
    gate = ws_events(server, run_id, until="confirmation_required")[-1]
    response = httpx.post(f"{server.url}/api/runs/{run_id}/gates/{gate['request_id']}", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == field
    unknown = httpx.post(
        f"{server.url}/api/runs/{run_id}/gates/gate_unknown", json={"approve": True}
    )
    assert (
        unknown.status_code == 404
        and "no gate 'gate_unknown'" in unknown.json()["error"]["message"]
    )
    httpx.post(f"{server.url}/api/runs/{run_id}/cancel")


@pytest.mark.parametrize(
    ("path", "params", "headers", "field"),
    [
        ("/api/runs", {"status": "sleeping"}, {}, "status"),
        ("/api/runs", {"limit": "many"}, {}, "limit"),
        ("/api/runs", {"limit": "0"}, {}, "limit"),
        ("/api/runs/{run}/events", {"after": "-1"}, {}, "after"),
        ("/api/runs/{run}/events", {"after": "x"}, {}, "after"),
        ("/api/runs/{run}/events", {"limit": "100000"}, {}, "limit"),
        (
            "/api/runs/{run}/events",
            {},
            {"Accept": "text/event-stream", "Last-Event-ID": "abc"},
            "Last-Event-ID",
        ),
    ],
)
def test_bad_query_parameters(
    server: LiveServer,
    tmp_path: Path,
    path: str,
    params: dict[str, str],
    headers: dict[str, str],
    field: str,
) -> None:
    run_id = start_run(
        server, {"prompt": "q", "model": echo_script(tmp_path / "s.json", 0), "tools": []}
    )["run_id"]
    wait_finished(server, run_id)
    response = httpx.get(server.url + path.format(run=run_id), params=params, headers=headers)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == field


def test_bad_websocket_after(server: LiveServer, tmp_path: Path) -> None:
    run_id = start_run(
        server, {"prompt": "q", "model": echo_script(tmp_path / "s.json", 0), "tools": []}
    )["run_id"]
    from websockets.sync.client import connect

    with (
        connect(f"{server.ws_url}/api/runs/{run_id}/ws?after=soon") as ws,
        pytest.raises(ConnectionClosedError) as closed,
    ):
        ws.recv(timeout=20)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4422
    assert "after" in closed.value.rcvd.reason


def test_wrong_method_is_a_json_405(server: LiveServer) -> None:
    response = httpx.delete(f"{server.url}/api/runs")
    assert response.status_code == 405
    assert response.json()["error"]["status"] == 405


def test_base_url_only_where_the_server_allows_it(server: LiveServer) -> None:
    response = httpx.post(
        f"{server.url}/api/runs", json={"prompt": "p", "base_url": "http://10.0.0.1:11434"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "base_url"


def test_bad_websocket_messages_get_error_frames(server: LiveServer) -> None:
    from server_helpers import ws_connect

    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "w"}})["run_id"]
    with ws_connect(server, run_id) as ws:
        while json.loads(ws.recv(timeout=20))["type"] != "confirmation_required":
            pass
        for message, field in (
            ("not json", None),
            (b"\x00binary", None),
            (json.dumps({"type": "approve"}), None),
            (json.dumps({"type": "confirm", "request_id": "x"}), "approve"),
            (json.dumps({"type": "confirm", "request_id": 5, "approve": True}), "request_id"),
        ):
            ws.send(message)
            reply = json.loads(ws.recv(timeout=20))
            assert reply["type"] == "error" and "seq" not in reply
            assert reply["error"].get("field") == field
    run = httpx.get(f"{server.url}/api/runs/{run_id}").json()
    assert len(run["pending_gates"]) == 1  # none of that decided the gate
    httpx.post(f"{server.url}/api/runs/{run_id}/cancel")


def test_a_body_too_large_is_a_413(server: LiveServer) -> None:
    response = httpx.post(f"{server.url}/api/runs", json={"prompt": "x" * 1_100_000})
    assert response.status_code == 413
    assert "larger than 1,000,000 bytes" in response.json()["error"]["message"]


@pytest.mark.parametrize("name", ["request", "prompt"])
def test_an_agent_run_takes_its_request_as_request_or_prompt(
    server: LiveServer, tmp_path: Path, name: str
) -> None:
    spec = echo_script(tmp_path / "s.json", 1)
    run = start_run(server, {name: "echo once", "model": spec, "tools": ["echo"]})
    assert run["request"] == "echo once" and run["kind"] == "agent"


def test_a_gate_decision_names_its_reviewer_as_the_caller_and_the_tenant(
    server: LiveServer,
) -> None:
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "No"}})["run_id"]
    gate = ws_events(server, run_id, until="confirmation_required")[-1]
    url = f"{server.url}/api/runs/{run_id}/gates/{gate['request_id']}"
    for bad in ("ana\nroot", "x" * 81, 7):
        refused = httpx.post(url, json={"approve": False, "by": bad})
        assert refused.status_code == 422 and refused.json()["error"]["field"] == "by"
    assert httpx.post(url, json={"approve": False, "by": " ana "}).status_code == 200
    wait_finished(server, run_id)
    events = httpx.get(f"{server.url}/api/runs/{run_id}/events").json()["events"]
    [decision] = [e for e in events if e["type"] == "gate_decision"]
    assert decision["decided_by"] == "ana (api:default)"
