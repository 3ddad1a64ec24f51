"""A run executing on a Temporal worker is never stored as running without its lease.

The store lists a `running` run with no lease as `interrupted`, and a follower (the CLI's
live view, `runs follow`, the server's SSE and WebSocket streams) stops at an interrupted
run that has nothing newer. The worker used to store `run_started` first and take the
lease after: on a busy machine a follower read the run in between and its stream ended
after one event. Here the worker's first lease waits (in the real PostgreSQL server)
while the test reads what a user would see."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from store_faults import BlockedInsert
from temporal_helpers import TemporalRuns, Workers, final

from loopwright.runtime import RunSpec
from loopwright.store import open_store


async def test_a_worker_takes_the_lease_before_it_stores_the_run_as_running(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([final("done")]), encoding="utf-8")
    spec = RunSpec(request="say done", model=f"scripted:{script}", workspace=str(tmp_path))
    block = BlockedInsert.first_lease(workers.store)
    store = open_store(workers.store)
    try:
        workers.start()
        handle = await runs.start(spec)
        await block.waiting()  # the worker is taking the run's lease, and waits
        seen = store.get_run(handle.id)
        events_meanwhile = [e.type for e in store.events(handle.id)]
        block.release()
        outcome = await asyncio.wait_for(handle.result(), 90)
        ended = store.get_run(handle.id)
    finally:
        block.close()
        store.close()

    assert seen is not None and seen.status == "queued", seen
    assert events_meanwhile == []  # nothing stored as running before the lease is held
    assert outcome["status"] == "completed", workers.logs()
    assert ended is not None and ended.status == "completed"
