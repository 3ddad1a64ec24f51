"""A worker stopped by SIGTERM in a rolling restart: its in-flight calls finish within
`--graceful-timeout` and their results are recorded (not "outcome unknown"); a call still
running when that time is up is handed back to another worker, and the run goes on (it is
not taken for the run's cancellation). While they run, activities heartbeat (what tells a
lost worker from a busy one) from one loop each, the first beat after its interval: a short
activity sends none."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import signal
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from run_tools import KILL_MARK
from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers, action, final
from temporalio.testing import ActivityEnvironment
from trial_helpers import until

from loopwright.engines.temporal import EngineSettings
from loopwright.engines.temporal._activity_support import UNCERTAIN, _heartbeating
from loopwright.events import RunFinishedEvent, ToolCallEvent
from loopwright.runtime import RunSpec
from loopwright.store import open_store

FAST = EngineSettings(heartbeat_timeout_s=5.0)


def _spec(folder: Path, replies: list[str], tools: str) -> RunSpec:
    script = folder / "script.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    return RunSpec(request="write the line", model=f"scripted:{script}",
                   tools=(f"{TOOLS_FILE}:{tools}",), workspace=str(folder))  # fmt: skip


def _tool_calls(store_url: str, run_id: str) -> tuple[list[ToolCallEvent], str]:
    store = open_store(store_url)
    try:
        events = store.events(run_id)
    finally:
        store.close()
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert isinstance(events[-1], RunFinishedEvent)
    return [e for e in events if isinstance(e, ToolCallEvent)], events[-1].status


async def test_a_sigtermed_worker_finishes_its_call_and_records_the_result(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    out = tmp_path / "out.txt"
    line = f"line1 {KILL_MARK}"  # the call waits after its effect until OUT.go exists
    spec = _spec(tmp_path, [action("append_line", path=str(out), text=line), final("done")],
                 "append_line")  # fmt: skip
    first = workers.start("--graceful-timeout", "120", LOOPWRIGHT_TEST_KILL_ONCE="after-commit")
    handle = await runs.start(spec, settings=FAST)
    hung = Path(f"{out}.hung")
    await until(hung.exists, workers.logs, 60)  # inside the call, after its effect

    first.send_signal(signal.SIGTERM)  # a rolling restart: this worker goes, another comes
    await until(lambda: "stopping" in workers.log_of(0), workers.logs, 30)
    workers.start()
    assert first.poll() is None  # it waits for its call
    Path(f"{out}.go").touch()
    outcome = await asyncio.wait_for(handle.result(), 120)
    assert first.wait(timeout=60) == 0, workers.log_of(0)

    assert outcome["status"] == "completed", workers.logs()
    assert out.read_text().splitlines() == [line]  # one effect
    [call], status = _tool_calls(workers.store, handle.id)
    assert status == "completed"
    assert (call.result, call.is_error) == (f"appended {line!r}", False)  # not UNCERTAIN


async def test_a_call_past_the_graceful_timeout_is_handed_back(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    release = tmp_path / "release"
    spec = _spec(tmp_path, [action("hold", path=str(release)), final("done")], "hold")
    first = workers.start("--graceful-timeout", "1")
    handle = await runs.start(spec, settings=FAST)
    held = Path(f"{release}.held")
    await until(held.exists, workers.logs, 60)  # the call is running on the first worker
    assert held.read_text() == str(first.pid)

    stopped_at = time.monotonic()
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=60) == 0, workers.log_of(0)
    waited = time.monotonic() - stopped_at  # the graceful timeout (1 s), then it is gone
    assert waited < 30, waited
    second = workers.start()
    await until(lambda: held.read_text() == str(second.pid), workers.logs, 60)  # handed back
    release.touch()
    outcome = await asyncio.wait_for(handle.result(), 120)

    assert outcome["status"] == "completed", workers.logs()  # not cancelled
    [call], status = _tool_calls(workers.store, handle.id)
    assert status == "completed"
    assert call.result == "released by release" and call.result != UNCERTAIN


def _activity_environment(beats: list[object], timeout_s: float) -> ActivityEnvironment:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, heartbeat_timeout=timedelta(seconds=timeout_s))
    env.on_heartbeat = lambda *details: beats.append(details)
    return env


async def test_an_activity_that_ends_before_its_first_beat_sends_no_heartbeat() -> None:
    beats: list[object] = []

    async def quick() -> str:
        return await _heartbeating(asyncio.sleep(0, "done"))

    assert await _activity_environment(beats, 30.0).run(quick) == "done"
    assert beats == []


async def test_waits_inside_an_activity_start_no_heartbeats_of_their_own() -> None:
    """The worker beats for the whole activity; a store call or a lock waited for inside
    it adds no second loop (each was one more heartbeat sent for every wait)."""
    beats: list[object] = []

    async def tasks_now() -> int:
        return len(asyncio.all_tasks())

    async def nested() -> tuple[int, int]:
        return await _heartbeating(tasks_now()), await _heartbeating(_heartbeating(tasks_now()))

    one, inside = await _activity_environment(beats, 30.0).run(nested)
    assert inside == one


async def test_a_long_wait_heartbeats_within_a_short_heartbeat_timeout() -> None:
    """The beats come until the wait ends (here: the wait ends on the second beat)."""
    beats: list[object] = []
    second = asyncio.Event()
    env = _activity_environment(beats, 0.3)

    def beaten(*details: Any) -> None:
        beats.append(details)
        if len(beats) >= 2:
            second.set()

    env.on_heartbeat = beaten

    async def waits() -> int:
        await _heartbeating(second.wait())
        return len(beats)

    assert await env.run(waits) == 2
