"""`loopwright serve` on the Postgres store streams, live, the events of a run executing on
a Temporal worker in another process (SSE: what the dashboard reads)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from temporal_helpers import TemporalRuns, Workers, action, final, loopwright_env, serving
from temporalio.client import WorkflowExecutionStatus

from loopwright.events import encode_event
from loopwright.runtime import RunSpec
from loopwright.store import open_store

TOOLS = Path(__file__).with_name("run_tools.py")


@pytest.fixture
def server(workers: Workers, tmp_path: Path) -> Iterator[str]:
    command = [sys.executable, "-m", "loopwright", "serve", "--port", "0",
               "--store", workers.store]  # fmt: skip
    with serving(command, tmp_path / "serve.log", loopwright_env()) as url:
        yield url


async def test_the_server_streams_a_worker_run_live(
    workers: Workers, server: str, tmp_path: Path, runs: TemporalRuns
) -> None:
    script = tmp_path / "script.json"
    release = tmp_path / "release"
    replies = [action("echo", text="hi"), action("hold", path=str(release)), final("waited")]
    script.write_text(json.dumps(replies))
    spec = RunSpec(
        request="wait a little",
        model=f"scripted:{script}",
        tools=("echo", f"{TOOLS}:hold"),
        workspace=str(tmp_path),
    )
    workers.start()
    handle = await runs.start(spec)
    store = open_store(workers.store)
    try:
        while store.get_run(handle.id) is None:
            await store.wait_for_events(handle.id, after=0, timeout=0.5)
        received: list[str] = []
        live_while_running = False
        status_seen = None
        async with httpx.AsyncClient(timeout=60) as http:
            url = f"{server}/api/runs/{handle.id}/events"
            headers = {"Accept": "text/event-stream"}
            async with http.stream("GET", url, headers=headers) as stream:
                async for line in stream.aiter_lines():
                    if not line.startswith("data: ") or '"seq"' not in line:
                        continue
                    received.append(line.removeprefix("data: "))
                    event = json.loads(received[-1])
                    if event["type"] == "tool_call_started" and event["tool_name"] == "hold":
                        status_seen = (await handle.describe()).status
                        live_while_running = status_seen == WorkflowExecutionStatus.RUNNING
                        release.touch()  # the call ends only once the stream showed it
                    if event["type"] == "run_finished":
                        break
        stored = [encode_event(e) for e in store.events(handle.id)]
    finally:
        store.close()
    shown = [json.loads(r)["type"] for r in received]
    assert live_while_running, (status_seen, shown)  # seen while the tool still held
    assert [json.loads(r) for r in received] == [json.loads(s) for s in stored]
    assert (await asyncio.wait_for(handle.result(), 30))["status"] == "completed"
