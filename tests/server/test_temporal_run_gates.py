"""A run that executes on Temporal workers (its record names the engine) has its gates
decided through its workflow only: a server without `--engine temporal` and `task approve`
without `--temporal` refuse, and leave no decision in the store where no workflow would
ever look for it; so do its cancel and resume. Its events need no engine: such a server
streams them from the store as the workers append them. No Temporal server is needed."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from server_helpers import live_server, make_config

from loopwright.cli import main
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    GateDecisionEvent,
    RunFinishedEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
    encode_event,
)
from loopwright.store import RunRecord, SqliteRunStore

RUN, GATE = "run_on_temporal01", "gate_0123456789ab"


def temporal_run(path: Path) -> SqliteRunStore:
    """A stored task run of the Temporal engine, waiting at a gate (a worker holds it)."""
    store = SqliteRunStore(path)
    store.register_run(RunRecord(RUN, "default", "task", "queued", "t", "", 0.5, 0.5, 0,
                                 engine="temporal"))  # fmt: skip
    store.append_many([
        RunStartedEvent(run_id=RUN, seq=1, ts=1.0, kind="task", request="t", model="",
                        tools=[], options={}, tenant="default"),
        ConfirmationRequiredEvent(run_id=RUN, seq=2, ts=2.0, step="approve", request_id=GATE,
                                  message="Go?", timeout_s=300.0),
    ])  # fmt: skip
    assert store.acquire_lease(RUN, "temporal-engine", 300.0)
    return store


def test_a_server_without_the_engine_refuses_a_temporal_runs_gate(tmp_path: Path) -> None:
    store = temporal_run(tmp_path / "runs.db")
    config = make_config(tmp_path, store=store)
    with live_server(config) as live:
        response = httpx.post(f"{live.url}/api/runs/{RUN}/gates/{GATE}", json={"approve": True})
        shown = httpx.get(f"{live.url}/api/runs/{RUN}").json()
    assert response.status_code == 409
    assert "executes on Temporal workers" in response.json()["error"]["message"]
    assert store.gate_decision(RUN, GATE) is None  # nothing left where no one looks
    assert [g["request_id"] for g in shown["pending_gates"]] == [GATE]


def test_a_server_without_the_engine_streams_a_temporal_runs_events(tmp_path: Path) -> None:
    store = temporal_run(tmp_path / "runs.db")
    later: list[Event] = [
        GateDecisionEvent(run_id=RUN, seq=3, ts=3.0, step="approve", request_id=GATE,
                          approved=True, decided_by="ops"),
        RunFinishedEvent(run_id=RUN, seq=4, ts=4.0, status="completed", answer=None,
                         reason=None, usage={}, cost=0.0, steps=1, partial=None),
    ]  # fmt: skip
    received: list[str] = []
    config = make_config(tmp_path, store=store)
    with live_server(config) as live:
        url = f"{live.url}/api/runs/{RUN}/events"
        headers = {"Accept": "text/event-stream"}
        with httpx.stream("GET", url, headers=headers, timeout=30) as stream:
            for line in stream.iter_lines():
                if line.startswith("data: ") and '"seq"' in line:
                    received.append(line.removeprefix("data: "))
                    if len(received) == 2:  # what was stored; the worker goes on meanwhile
                        store.append_many(later)
                        store.release_lease(RUN, "temporal-engine")
        cancel = httpx.post(f"{live.url}/api/runs/{RUN}/cancel")
    assert received == [encode_event(e) for e in store.events(RUN)]
    assert [e.seq for e in store.events(RUN)] == [1, 2, 3, 4]
    assert cancel.status_code == 409


def finished(run_id: str, seq: int) -> RunFinishedEvent:
    return RunFinishedEvent(run_id=run_id, seq=seq, ts=9.0, status="completed", answer="ok",
                            reason=None, usage={}, cost=0.0, steps=1, partial=None)  # fmt: skip


def test_a_temporal_runs_stream_holds_its_subagents_events_inside_the_call(
    tmp_path: Path,
) -> None:
    """A sub-agent's run (its events stored by the worker) comes in the lead's stream
    between the call's start and end, without SSE ids (its seq is not the lead's). (That
    they come while the call is open: tests/temporal/test_temporal_subagents.py.)"""
    lead, child, call = "run_lead_temporal", "run_child_of_call", "call_1_0"
    store = SqliteRunStore(tmp_path / "runs.db")
    store.register_run(RunRecord(lead, "default", "agent", "queued", "r", "m", 0.5, 0.5, 0,
                                 engine="temporal"))  # fmt: skip
    store.append_many([
        RunStartedEvent(run_id=lead, seq=1, ts=1.0, kind="agent", request="r", model="m",
                        tools=["helper"], options={}, tenant="default"),
        ToolCallStartedEvent(run_id=lead, seq=2, ts=2.0, iteration_number=1, call_id=call,
                             tool_name="helper", arguments={}, child_run_id=child),
    ])  # fmt: skip
    assert store.acquire_lease(lead, "temporal-engine", 300.0)
    inside: list[Event] = [
        RunStartedEvent(run_id=child, seq=1, ts=3.0, kind="agent", request="sub", model="m",
                        tools=[], options={}, tenant="default", parent_run_id=lead,
                        parent_call_id=call),
        finished(child, 2),
    ]  # fmt: skip
    after: list[Event] = [
        ToolCallEvent(run_id=lead, seq=3, ts=4.0, iteration_number=1, call_id=call,
                      tool_name="helper", arguments={}, args_summary="", result="ok",
                      result_summary="ok", is_error=False, duration_ms=1.0),
        finished(lead, 4),
    ]  # fmt: skip
    lines: list[str] = []
    with live_server(make_config(tmp_path, store=store)) as live:
        url = f"{live.url}/api/runs/{lead}/events"
        with httpx.stream("GET", url, headers={"Accept": "text/event-stream"}, timeout=30) as sse:
            for line in sse.iter_lines():
                lines.append(line)
                if not line.startswith("data: ") or '"seq"' not in line:
                    continue
                if json.loads(line.removeprefix("data: "))["type"] == "tool_call_started":
                    store.append_many(inside)  # the worker goes on meanwhile
                    store.append_many(after)
    data = [line.removeprefix("data: ") for line in lines if '"seq"' in line]
    assert data == [encode_event(e) for e in [*store.events(lead)[:2], *inside, *after]]
    assert [line for line in lines if line.startswith("id: ")] == ["id: 1", "id: 2", "id: 3",
                                                                   "id: 4"]  # fmt: skip


def test_a_server_without_the_engine_refuses_to_drive_a_temporal_run(tmp_path: Path) -> None:
    store = temporal_run(tmp_path / "runs.db")
    store.release_lease(RUN, "temporal-engine")  # its worker died: the run is interrupted
    config = make_config(tmp_path, store=store)
    with live_server(config) as live:
        cancel = httpx.post(f"{live.url}/api/runs/{RUN}/cancel")
        resume = httpx.post(f"{live.url}/api/runs/{RUN}/resume")
    for response in (cancel, resume):
        assert response.status_code == 409
        assert "executes on Temporal workers" in response.json()["error"]["message"]
    assert [e.seq for e in store.events(RUN)] == [1, 2]


def test_task_approve_needs_the_temporal_address(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    temporal_run(path).close()
    assert main(["task", "approve", RUN, "--store", str(path)]) == 2
    assert "pass --temporal HOST:PORT" in capsys.readouterr().err
    store = SqliteRunStore(path)
    try:
        assert store.gate_decision(RUN, GATE) is None
    finally:
        store.close()
