"""Live events over SSE and WebSocket: from a given seq, across reconnects, nothing missed
and nothing twice; the wire format is the events codec's."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import (
    HeldModel,
    LiveServer,
    echo_script,
    live_server,
    make_config,
    seqs,
    sse_stream,
    start_run,
    tasks_folder,
    wait_finished,
    ws_connect,
    ws_events,
)
from websockets.exceptions import ConnectionClosedOK

from loopwright import AgentExecutor
from loopwright.events import Event, IterationStartedEvent, RunStartedEvent
from loopwright.runtime import Runtime
from loopwright.store import open_store
from loopwright.tools import resolve_tools


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_server(make_config(tmp_path, tasks_dir=tasks_folder(tmp_path))) as live:
        yield live


def stored(server: LiveServer, run_id: str) -> list[dict[str, object]]:
    events: list[dict[str, object]] = httpx.get(f"{server.url}/api/runs/{run_id}/events").json()[
        "events"
    ]
    return events


def finished_run(server: LiveServer, tmp_path: Path, calls: int = 5) -> str:
    spec = echo_script(tmp_path / "s.json", calls)
    run_id: str = start_run(server, {"prompt": "p", "model": spec, "tools": ["echo"]})["run_id"]
    wait_finished(server, run_id)
    return run_id


def test_sse_sends_every_event_with_its_seq_as_id(server: LiveServer, tmp_path: Path) -> None:
    run_id = finished_run(server, tmp_path)
    events, ids, end = sse_stream(server, run_id)
    assert events == stored(server, run_id)
    assert ids == [str(e["seq"]) for e in events]
    assert end == {"run_id": run_id, "status": "completed"}


def test_sse_starts_after_the_given_seq_or_last_event_id(
    server: LiveServer, tmp_path: Path
) -> None:
    run_id = finished_run(server, tmp_path)
    total = len(stored(server, run_id))
    assert seqs(sse_stream(server, run_id, after=7)[0]) == list(range(8, total + 1))
    assert seqs(sse_stream(server, run_id, last_event_id=11)[0]) == list(range(12, total + 1))
    # a reconnecting EventSource sends Last-Event-ID along with its original ?after=
    assert seqs(sse_stream(server, run_id, after=3, last_event_id=9)[0]) == list(
        range(10, total + 1)
    )
    assert sse_stream(server, run_id, after=total)[0] == []


def test_websocket_sends_events_after_the_given_seq(server: LiveServer, tmp_path: Path) -> None:
    run_id = finished_run(server, tmp_path)
    everything = stored(server, run_id)
    assert ws_events(server, run_id) == everything
    assert ws_events(server, run_id, after=6) == everything[6:]


def test_websocket_reconnect_during_a_live_run(server: LiveServer) -> None:
    """Disconnect while the task waits at its gate, let it go on, reconnect from the last
    seq seen: together the two connections have every event exactly once."""
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "t"}})["run_id"]
    first = ws_events(server, run_id, until="confirmation_required")
    gate = first[-1]
    httpx.post(f"{server.url}/api/runs/{run_id}/gates/{gate['request_id']}", json={"approve": True})
    second = ws_events(server, run_id, after=int(gate["seq"]))
    assert second[0]["type"] == "gate_decision"
    assert seqs(first + second) == list(range(1, len(first) + len(second) + 1))
    assert first + second == stored(server, run_id)


def test_sse_reconnect_during_a_live_run(server: LiveServer) -> None:
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "t"}})["run_id"]
    first, ids, end = sse_stream(server, run_id, until="confirmation_required")
    assert end is None
    gate = first[-1]
    httpx.post(f"{server.url}/api/runs/{run_id}/gates/{gate['request_id']}", json={"approve": True})
    second, _, end = sse_stream(server, run_id, last_event_id=int(ids[-1] or 0))
    assert end == {"run_id": run_id, "status": "completed"}
    assert first + second == stored(server, run_id)
    assert len({e["seq"] for e in first + second}) == len(first + second)


def test_many_subscribers_of_one_live_run_each_see_it_whole(server: LiveServer) -> None:
    """Subscribers joining at different points of a live run (one from the start, one from
    the middle) all end with the same complete log."""
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "t"}})["run_id"]
    waiting = ws_events(server, run_id, until="confirmation_required")
    with ws_connect(server, run_id) as early, ws_connect(server, run_id, after=2) as middle:
        got_early = [json.loads(early.recv(timeout=20)) for _ in range(len(waiting))]
        got_middle = [json.loads(middle.recv(timeout=20)) for _ in range(len(waiting) - 2)]
        gate = waiting[-1]
        httpx.post(
            f"{server.url}/api/runs/{run_id}/gates/{gate['request_id']}", json={"approve": True}
        )
        for ws, got in ((early, got_early), (middle, got_middle)):
            while got[-1]["type"] != "run_finished":
                got.append(json.loads(ws.recv(timeout=20)))
    everything = stored(server, run_id)
    assert got_early == everything
    assert got_middle == everything[2:]


def test_follow_a_run_another_process_executes(tmp_path: Path) -> None:
    """A run executed by another runtime on the same SQLite file (as `loopwright run` would)
    is followed live from the store, step by step, until it ends: each event once, in order."""
    path = tmp_path / "runs.db"
    config = make_config(tmp_path, store=open_store(path))
    config.follow_poll_s = 0.02
    other = Runtime(open_store(path))  # its own store connection and lease owner
    model = HeldModel(calls=3)
    agent = AgentExecutor(model, resolve_tools(["echo"]))
    run_id = "run_elsewhere_0001"
    started = threading.Event()

    async def execute() -> None:
        async def sink(event: Event) -> None:
            await other.publish(event)
            if isinstance(event, RunStartedEvent):
                started.set()

        await agent.run("echo three lines", run_id=run_id, on_event=sink)

    elsewhere = threading.Thread(target=lambda: asyncio.run(execute()))
    elsewhere.start()
    try:
        assert started.wait(20)
        with live_server(config) as server, ws_connect(server, run_id) as ws:
            got = [json.loads(ws.recv(timeout=20)) for _ in range(2)]  # run_started, iteration
            assert [e["type"] for e in got] == ["run_started", "iteration_started"]
            model.release(1)  # the other process makes one tool call: it reaches us live
            while got[-1]["type"] != "tool_call":
                got.append(json.loads(ws.recv(timeout=20)))
            assert httpx.get(f"{server.url}/api/runs/{run_id}").json()["live"] is False
            model.release(3)
            while got[-1]["type"] != "run_finished":
                got.append(json.loads(ws.recv(timeout=20)))
            with pytest.raises(ConnectionClosedOK):
                ws.recv(timeout=20)
            assert got == stored(server, run_id)
            assert got[-1]["status"] == "completed"
    finally:
        model.release(10)
        elsewhere.join(timeout=20)


def test_an_interrupted_run_ends_the_stream(tmp_path: Path) -> None:
    """A run nobody executes any more (its process died) is not waited on forever."""
    path = tmp_path / "runs.db"
    first = open_store(path)
    first.append_many(
        [
            RunStartedEvent(
                run_id="run_dead_0001",
                seq=1,
                ts=1.0,
                kind="agent",
                request="p",
                model="m",
                tools=[],
                options={},
                tenant="default",
            ),
            IterationStartedEvent(
                run_id="run_dead_0001", seq=2, ts=2.0, iteration_number=1, max_iterations=5
            ),
        ]
    )
    with live_server(make_config(tmp_path, store=open_store(path))) as server:
        assert seqs(ws_events(server, "run_dead_0001")) == [1, 2]
        events, _, end = sse_stream(server, "run_dead_0001")
        assert seqs(events) == [1, 2]
        assert end == {"run_id": "run_dead_0001", "status": "interrupted"}
