"""Stopping a run: interrupting one that executes here (it stays resumable), and ending
for good (`cancelled`) one that executes nowhere now: interrupted, or waiting for a
decision. The Runtime's `interrupt` and `cancel` call these."""

from __future__ import annotations

import asyncio
import contextlib
import time

from loopwright.errors import INTERRUPT, UsageError
from loopwright.events import RunFinishedEvent
from loopwright.runtime._embedded import EmbeddedEngine
from loopwright.runtime._engines import Engines
from loopwright.store import RunRecord

ENDS_HERE = ("interrupted", "waiting")
"""Statuses of a run that executes nowhere and has not ended: `cancel` ends it here."""


async def interrupt_here(engine: EmbeddedEngine, run_id: str) -> bool:
    """Stop the run's task in this process without ending the run: no `run_finished` is
    stored and its lease is released, so it shows `interrupted` (`runs resume` goes on).
    False when no run of this process executes it."""
    handle = engine.handles.get(run_id)
    if handle is None or handle.done:
        return False
    handle.task.cancel(INTERRUPT)
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await handle.task
    return True


async def cancel_stored(engine: EmbeddedEngine, record: RunRecord) -> bool:
    """End a run that executes nowhere now (interrupted, or waiting for a decision) as
    `cancelled`: its log gets its `run_finished`, under its lease (ResumeConflict if a
    process took it up meanwhile). A UsageError for a run that already ended."""
    run_id = record.run_id
    if record.status not in ENDS_HERE:
        if record.status in ("running", "queued"):
            raise UsageError(
                f"run {run_id} executes in another process: stop it there (Ctrl-C), or "
                f"cancel it from the process that reaches its engine"
            )
        raise UsageError(f"run {run_id} already ended ({record.status}); nothing to cancel")
    engine.leases.hold_as_read(run_id, record.last_seq)
    try:
        finished = RunFinishedEvent(
            run_id=run_id, seq=record.last_seq + 1, ts=time.time(), status="cancelled",
            answer=None, reason="cancelled", usage={}, cost=0.0, steps=0, partial=None,
        )  # fmt: skip
        engine.writer.write(finished)
        await engine.writer.flush()
    finally:
        engine.leases.release(run_id)
    return True


async def cancel_run(
    embedded: EmbeddedEngine, engines: Engines, run_id: str, tenant: str | None
) -> bool:
    """`Runtime.cancel`: on the engine executing the run, else here when it executes
    nowhere now, else on its engine."""
    engine = engines.running(run_id)
    record = embedded.store.get_run(run_id, tenant=tenant)
    if engine is not None and record is None:  # started here, not stored yet
        return await engine.cancel(_unstored(run_id))
    if record is None:
        record = embedded.store.find_run(run_id, tenant=tenant)
    if engine is None and record.engine == embedded.name:
        return await cancel_stored(embedded, record)
    return await (engine or engines.of(record)).cancel(record)


def _unstored(run_id: str) -> RunRecord:
    """The record of a run started here whose first event is not stored yet."""
    return RunRecord(run_id, "", "agent", "running", "", "", 0.0, 0.0, 0)
