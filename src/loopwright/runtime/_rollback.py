"""Rolling a finished task run back, in this process, as a task run of its own."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from loopwright.agent._process import new_run_id
from loopwright.effects._log import EventSink
from loopwright.events import RunFinishedEvent
from loopwright.runtime._embedded import EmbeddedEngine
from loopwright.runtime._handles import RunHandle
from loopwright.safety.operations import SnapshotHook

if TYPE_CHECKING:
    from loopwright.tasks import TaskRunState
    from loopwright.tasks._state import StateFileExporter


def launch_rollback(
    embedded: EmbeddedEngine,
    state: TaskRunState,
    *,
    snapshot_hooks: Mapping[str, SnapshotHook] | None = None,
    exporter: StateFileExporter | None = None,
    on_event: EventSink | None = None,
) -> RunHandle:
    """`Runtime.rollback`: the rollback's run on the embedded engine; once every change
    is undone, the original run is stored `rolled_back`."""
    from loopwright.tasks._rollback import (
        rollback_task_run,  # the task runner: not for agent runs
    )

    run_id = new_run_id()

    async def body() -> str:
        status = "failed"
        async for event in rollback_task_run(
            state, sink=on_event, snapshot_hooks=snapshot_hooks, exporter=exporter,
            run_id=run_id, recorder=embedded.writer,
        ):  # fmt: skip
            if isinstance(event, RunFinishedEvent):
                status = event.status
        if status == "completed":
            await asyncio.to_thread(_mark_rolled_back, embedded, state.task_id)
        return status

    return embedded.launch(run_id, body())


def _mark_rolled_back(embedded: EmbeddedEngine, run_id: str) -> None:
    """The original run of a finished rollback (when the store holds it: a task run from
    before the store kept its state file only)."""
    if embedded.store.get_run(run_id) is not None:
        embedded.store.set_status(run_id, "rolled_back")
