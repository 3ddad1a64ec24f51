"""What a task run's steps share: the plan, the run's Effects, and its journal.

`Journal` is how every event of a task run goes out: through the run's EventLog (which
numbers, stamps, scrubs and records it), then folded into the run's TaskRunState, whose
state file is exported off the event loop after each step and at the end, before the
event that changed it is recorded or sent.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from typing import TypeVar

from loopwright.effects import Effects
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    RunFinishedEvent,
    StepCompleteEvent,
    TaskCompleteEvent,
)
from loopwright.run_context import RunContext
from loopwright.safety.operations import OperationSafety
from loopwright.tasks._models import TaskRunState
from loopwright.tasks._spec import TaskPlan
from loopwright.tasks._state import StateWriter, apply_event
from loopwright.tools import ToolExecutor

E = TypeVar("E", bound=Event)
EXPORT_AFTER = (
    StepCompleteEvent,
    ConfirmationRequiredEvent,
    TaskCompleteEvent,
    RunFinishedEvent,
)
"""The state file is written after these (not after every event)."""


class Journal:
    """Appends a task run's events to its log and folds them into its state.

    With a state file, each event that changes what the file shows (EXPORT_AFTER) is
    folded in and the file written before the log records or sends the event: nobody is
    told of a step the file does not hold yet.
    """

    def __init__(self, fx: Effects, writer: StateWriter | None = None) -> None:
        self.fx = fx
        self.writer = writer
        self.state = TaskRunState(task_id=fx.log.run_id)
        self._started: dict[str, tuple[str, float]] = {}
        self._folded: Event | None = None
        if writer is not None:
            fx.log.before_send = self._fold_and_export

    async def _fold_and_export(self, event: Event) -> None:
        apply_event(self.state, event, self._started)
        self._folded = event
        if self.writer is not None and isinstance(event, EXPORT_AFTER):
            await self.writer.save(self.state)

    async def append(self, draft: E, /) -> E:
        event = await self.fx.log.append(draft)
        if event is None:  # nobody reads the log: the state still needs the event
            event = dataclasses.replace(draft, run_id=self.fx.log.run_id, ts=time.time())
        if event is not self._folded:  # not sent (a recorded one re-made, or nobody listens)
            apply_event(self.state, event, self._started)
            if self.writer is not None and isinstance(event, EXPORT_AFTER):
                await self.writer.save(self.state)
        return event


@dataclass(frozen=True)
class StepContext:
    """What every step handler reads (and nothing it may change)."""

    plan: TaskPlan
    fx: Effects
    journal: Journal
    tool_executor: ToolExecutor
    safety: OperationSafety
    run: RunContext
    """The task run's context (its tenant, workspace, scrubber, gates, store, leases, tool
    threads): its tools get it, and an agent step's run is derived from it."""

    @property
    def run_id(self) -> str:
        return self.fx.log.run_id


def gate_request_id(run_id: str, step: str) -> str:
    """What names a gate in every process of the run (its id is this and a secret part:
    `EventLog.gate_id`; a run recorded before gates had one used this as the id)."""
    return "gate_" + hashlib.sha256(f"{run_id}/{step}".encode()).hexdigest()[:12]


def tool_call_id(run_id: str, step: str) -> str:
    return f"{run_id}:{step}"
