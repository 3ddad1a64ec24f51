"""The API over real HTTP against uvicorn: start, list, get, events, cancel, gates, resume."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import jsonschema
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

from loopwright.events import SCHEMA_VERSION, event_from_dict, event_to_dict
from loopwright.store import RunStore, open_store
from loopwright.testing import InMemoryRunStore


@pytest.fixture(params=["memory", "sqlite"])
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """The app over an in-memory store and over a SQLite file."""
    store = open_store(tmp_path / "runs.db") if request.param == "sqlite" else InMemoryRunStore()
    config = make_config(tmp_path, store=store, tasks_dir=tasks_folder(tmp_path))
    with live_server(config) as live:
        yield live


def test_an_agent_run_starts_and_finishes(server: LiveServer, tmp_path: Path) -> None:
    spec = echo_script(tmp_path / "s.json", 3, answer="all echoed")
    created = start_run(server, {"prompt": "echo thrice", "model": spec, "tools": ["echo"]})
    assert created["kind"] == "agent"
    assert created["request"] == "echo thrice"
    assert created["tenant"] == "default"

    run = wait_finished(server, created["run_id"])
    assert run["status"] == "completed"
    assert run["answer"] == "all echoed"
    assert run["output_tokens"] > 0
    assert run["live"] is False
    assert run["pending_gates"] == []

    listed = httpx.get(f"{server.url}/api/runs").json()["runs"]
    assert [r["run_id"] for r in listed] == [created["run_id"]]
    assert listed[0]["status"] == "completed"
    assert httpx.get(f"{server.url}/api/runs", params={"status": "failed"}).json()["runs"] == []


def test_events_as_json_pages_in_the_codecs_wire_format(server: LiveServer, tmp_path: Path) -> None:
    run_id = start_run(
        server, {"prompt": "p", "model": echo_script(tmp_path / "s.json", 4), "tools": ["echo"]}
    )["run_id"]
    wait_finished(server, run_id)
    url = f"{server.url}/api/runs/{run_id}/events"
    page = httpx.get(url).json()
    events = page["events"]
    assert [e["seq"] for e in events] == list(range(1, page["last_seq"] + 1))
    assert page["more"] is False and page["status"] == "completed"
    for wire in events:  # exactly what the codec writes, and it decodes back
        assert wire["v"] == SCHEMA_VERSION
        assert event_to_dict(event_from_dict(wire)) == wire
    tool_calls = [e for e in events if e["type"] == "tool_call"]
    assert len(tool_calls) == 4
    assert {"tool_name", "args_summary", "result_summary", "iteration_number"} <= set(tool_calls[0])

    later = httpx.get(url, params={"after": 5, "limit": 3}).json()
    assert [e["seq"] for e in later["events"]] == [6, 7, 8]
    assert later["more"] is True


def test_a_task_run_waits_at_its_gate_until_approved(server: LiveServer, tmp_path: Path) -> None:
    created = start_run(server, {"task": "publish-notes", "inputs": {"title": "Hello"}})
    assert created["kind"] == "task"
    run_id = created["run_id"]
    events = ws_events(server, run_id, until="confirmation_required")
    gate = events[-1]
    run = httpx.get(f"{server.url}/api/runs/{run_id}").json()
    assert run["live"] is True
    assert [g["request_id"] for g in run["pending_gates"]] == [gate["request_id"]]
    assert run["pending_gates"][0]["message"] == "Write NOTES.md titled Hello?"
    assert not (tmp_path / "ws" / "NOTES.md").exists()

    decided = httpx.post(
        f"{server.url}/api/runs/{run_id}/gates/{gate['request_id']}", json={"approve": True}
    )
    assert decided.status_code == 200
    assert decided.json() == {"run_id": run_id, "request_id": gate["request_id"], "approved": True}
    run = wait_finished(server, run_id)
    assert run["status"] == "completed"
    assert (tmp_path / "ws" / "NOTES.md").read_text() == "Hello"
    rest = httpx.get(f"{server.url}/api/runs/{run_id}/events", params={"after": gate["seq"]}).json()
    decision = rest["events"][0]
    assert decision["type"] == "gate_decision"
    assert decision["approved"] is True and decision["decided_by"] == "api:default"

    again = httpx.post(
        f"{server.url}/api/runs/{run_id}/gates/{gate['request_id']}", json={"approve": True}
    )
    assert again.status_code == 409


def test_a_rejected_gate_cancels_the_task(server: LiveServer, tmp_path: Path) -> None:
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "No"}})["run_id"]
    gate = ws_events(server, run_id, until="confirmation_required")[-1]
    response = httpx.post(
        f"{server.url}/api/runs/{run_id}/gates/{gate['request_id']}", json={"approve": False}
    )
    assert response.status_code == 200
    run = wait_finished(server, run_id)
    assert run["status"] == "cancelled"
    assert not (tmp_path / "ws" / "NOTES.md").exists()


def test_a_gate_decided_over_the_websocket(server: LiveServer, tmp_path: Path) -> None:
    """Seed 004: the WebSocket handler confirms a gate by its request id."""
    from server_helpers import ws_connect

    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "Via WS"}})["run_id"]
    seen: list[dict[str, object]] = []
    with ws_connect(server, run_id) as ws:
        while not seen or seen[-1]["type"] != "confirmation_required":
            seen.append(json.loads(ws.recv(timeout=20)))
        ws.send(json.dumps({"type": "confirm", "request_id": "gate_nope", "approve": True}))
        error = json.loads(ws.recv(timeout=20))
        assert error["type"] == "error" and error["error"]["field"] == "request_id"
        ws.send(
            json.dumps({"type": "confirm", "request_id": seen[-1]["request_id"], "approve": True})
        )
        while seen[-1].get("type") != "run_finished":  # (.get: not the narrowed ["type"])
            seen.append(json.loads(ws.recv(timeout=20)))
    decision = next(e for e in seen if e["type"] == "gate_decision")
    assert decision["decided_by"] == "ws:default"
    assert seen[-1]["status"] == "completed"
    assert (tmp_path / "ws" / "NOTES.md").read_text() == "Via WS"


def test_cancel_a_live_run(server: LiveServer) -> None:
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "x"}})["run_id"]
    ws_events(server, run_id, until="confirmation_required")
    response = httpx.post(f"{server.url}/api/runs/{run_id}/cancel")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    assert response.json()["live"] is False
    events = httpx.get(f"{server.url}/api/runs/{run_id}/events").json()["events"]
    assert events[-1]["type"] == "run_finished" and events[-1]["status"] == "cancelled"
    again = httpx.post(f"{server.url}/api/runs/{run_id}/cancel")
    assert again.status_code == 409
    assert "already ended (cancelled)" in again.json()["error"]["message"]


def new_store(kind: str, path: Path) -> RunStore:
    return open_store(path) if kind == "sqlite" else InMemoryRunStore()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_resume_an_interrupted_agent_run(tmp_path: Path, kind: str) -> None:
    """A run cut off after its second tool call continues from its log: the recorded model
    replies and tool results are reused, only the rest is asked of the model."""
    first = new_store(kind, tmp_path / "first.db")
    spec = echo_script(tmp_path / "script.json", 3, answer="resumed fine")
    with live_server(make_config(tmp_path, store=first)) as live:
        run_id = start_run(live, {"prompt": "p", "model": spec, "tools": ["echo"]})["run_id"]
        wait_finished(live, run_id)
    events = first.events(run_id)
    second_call = [e for e in events if e.type == "tool_call"][1]

    store = new_store(kind, tmp_path / "crashed.db")  # the process "crashed" after that call
    store.append_many([e for e in events if e.seq <= second_call.seq])
    if kind == "memory":
        store.set_status(run_id, "interrupted")  # SQLite says so by itself: no live lease
    record = store.get_run(run_id)
    assert record is not None and record.status == "interrupted"
    with live_server(make_config(tmp_path, store=store)) as live:
        response = httpx.post(f"{live.url}/api/runs/{run_id}/resume")
        assert response.status_code == 202, response.text
        run = wait_finished(live, run_id)
        assert run["status"] == "completed"
        assert run["answer"] == "resumed fine"
        resumed = httpx.get(f"{live.url}/api/runs/{run_id}/events").json()["events"]
        assert [e["seq"] for e in resumed] == list(range(1, len(resumed) + 1))
        assert len([e for e in resumed if e["type"] == "tool_call"]) == 3
        assert len([e for e in resumed if e["type"] == "model_response"]) == 4
        again = httpx.post(f"{live.url}/api/runs/{run_id}/resume")
        assert again.status_code == 409
        assert "already ended (completed)" in again.json()["error"]["message"]


def test_resume_refuses_a_run_another_process_holds(tmp_path: Path) -> None:
    store = InMemoryRunStore()
    spec = echo_script(tmp_path / "script.json", 2)
    with live_server(make_config(tmp_path, store=store)) as live:
        run_id = start_run(live, {"prompt": "p", "model": spec, "tools": ["echo"]})["run_id"]
        wait_finished(live, run_id)
    crashed = InMemoryRunStore()
    crashed.append_many(store.events(run_id)[:5])
    assert crashed.acquire_lease(run_id, "another-host:4242:abcdef", 600)
    with live_server(make_config(tmp_path, store=crashed)) as live:
        response = httpx.post(f"{live.url}/api/runs/{run_id}/resume")
        assert response.status_code == 409
        assert "another-host:4242:abcdef" in response.json()["error"]["message"]


def test_a_task_run_cannot_be_resumed(server: LiveServer) -> None:
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "x"}})["run_id"]
    ws_events(server, run_id, until="confirmation_required")
    live = httpx.post(f"{server.url}/api/runs/{run_id}/resume")
    assert live.status_code == 409 and "already running" in live.json()["error"]["message"]
    httpx.post(f"{server.url}/api/runs/{run_id}/cancel")
    over = httpx.post(f"{server.url}/api/runs/{run_id}/resume")
    assert over.status_code == 409


def test_openapi_schema_lists_every_endpoint(server: LiveServer) -> None:
    schema = httpx.get(f"{server.url}/api/openapi.json").json()
    assert schema["openapi"].startswith("3.1")
    paths = schema["paths"]
    assert set(paths["/api/runs"]) == {"get", "post"}
    for path in (
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/events",
        "/api/runs/{run_id}/ws",
        "/api/runs/{run_id}/cancel",
        "/api/runs/{run_id}/gates/{gate_id}",
        "/api/runs/{run_id}/resume",
    ):
        assert path in paths
    assert (
        "max_iterations"
        in schema["components"]["schemas"]["AgentRunRequest"]["properties"]["options"]["properties"]
    )


def test_responses_match_the_openapi_schema(server: LiveServer, tmp_path: Path) -> None:
    schema = httpx.get(f"{server.url}/api/openapi.json").json()

    def check(component: str, instance: object) -> None:
        validator = jsonschema.Draft202012Validator(
            {**schema, "$ref": f"#/components/schemas/{component}"}
        )
        validator.validate(instance)

    spec = echo_script(tmp_path / "s.json", 1)
    body = {"prompt": "p", "model": spec, "tools": ["echo"], "options": {"max_iterations": 3}}
    check("AgentRunRequest", body)
    run = start_run(server, body)
    check("Run", run)
    check("Run", wait_finished(server, run["run_id"]))
    page = httpx.get(f"{server.url}/api/runs/{run['run_id']}/events").json()
    check("EventPage", page)
    bad = httpx.post(f"{server.url}/api/runs", json={"prompt": ""}).json()
    check("Error", bad)
    with pytest.raises(jsonschema.ValidationError):
        check("AgentRunRequest", {"prompt": "p", "options": {"turbo": 1}})
    check("AgentRunRequest", {"prompt": "p", "options": {"last_turn": False}})
    with pytest.raises(jsonschema.ValidationError):
        check("AgentRunRequest", {"prompt": "p", "options": {"last_turn": "off"}})
    check("GateDecisionRequest", {"approve": False, "reason": "not now", "by": "ops"})
    with pytest.raises(jsonschema.ValidationError):
        check("GateDecisionRequest", {"approve": "yes"})
    check("ForkRequest", {"at": 1, "request": "again"})
    with pytest.raises(jsonschema.ValidationError):
        check("ForkRequest", {"at": -1})
    gate = schema["paths"]["/api/runs/{run_id}/gates/{gate_id}"]["post"]["requestBody"]
    assert gate["content"]["application/json"]["schema"]["$ref"].endswith("GateDecisionRequest")


@pytest.mark.parametrize(("given", "recorded"), [({"last_turn": False}, False), ({}, True)])
def test_the_last_turn_option_reaches_the_recorded_run(
    server: LiveServer, tmp_path: Path, given: dict[str, bool], recorded: bool
) -> None:
    spec = echo_script(tmp_path / "s.json", 1)
    body = {"prompt": "p", "model": spec, "tools": ["echo"], "options": given}
    run = wait_finished(server, start_run(server, body)["run_id"])
    started = httpx.get(f"{server.url}/api/runs/{run['run_id']}/events").json()["events"][0]
    assert started["options"]["last_turn"] is recorded
    assert started["spec"]["options"]["last_turn"] is recorded


def test_info_and_the_dashboard_are_served(server: LiveServer) -> None:
    info = httpx.get(f"{server.url}/api/info").json()
    assert "echo" in info["tools"] and info["auth"] is False
    assert info["tasks"][0]["name"] == "publish-notes"
    assert info["tasks"][0]["inputs"] == {"title": None}
    page = httpx.get(server.url + "/")
    assert page.status_code == 200 and "<title>loopwright</title>" in page.text
    for asset in ("app.js", "timeline.js", "style.css"):
        assert httpx.get(f"{server.url}/static/{asset}").status_code == 200
    missing = httpx.get(f"{server.url}/api/nope")
    assert missing.status_code == 404 and missing.json()["error"]["status"] == 404


def test_finished_runs_leave_no_handle_behind(server: LiveServer, tmp_path: Path) -> None:
    """A long-lived server forgets finished runs (the store has them)."""
    runtime = server.config.runtime
    run_id = start_run(
        server, {"prompt": "p", "model": echo_script(tmp_path / "s.json", 1), "tools": ["echo"]}
    )["run_id"]
    assert wait_finished(server, run_id)["status"] == "completed"
    assert run_id not in runtime.handles
    assert len(httpx.get(f"{server.url}/api/runs/{run_id}/events").json()["events"]) > 0
    assert httpx.post(f"{server.url}/api/runs/{run_id}/cancel").status_code == 409
