"""A task run's state as an explicit value: what each step returns, and how the run advances.

Step handlers return a `StepOutcome`; `advance` folds it into the run's `TaskProgress` (the
step results later steps read, the change log, whether the last step was an approved gate,
and why the run stops, if it does). Nothing else carries state from one step to the next.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loopwright.events._types import RunStatus
from loopwright.safety.operations import ChangeEntry
from loopwright.tasks._models import StepStatus


@dataclass(frozen=True)
class StepOutcome:
    """How one step ended: its `step_complete` status, its result or error, its changes."""

    status: StepStatus
    result: Any = None
    error: str | None = None
    changes: tuple[ChangeEntry, ...] = ()
    """What the step backed up before changing it (the run's change log grows by these)."""
    approved_gate: bool = False
    """A gate step that was approved: the next write step needs no gate of its own."""

    @classmethod
    def completed(cls, result: Any, **fields: Any) -> StepOutcome:
        return cls("completed", result, **fields)

    @classmethod
    def failed(cls, error: str, **fields: Any) -> StepOutcome:
        return cls("failed", error=error, **fields)

    @classmethod
    def skipped(cls, reason: str) -> StepOutcome:
        return cls("skipped", result=reason)

    @classmethod
    def gate_refused(cls, outcome: str, decided_by: str, name: str) -> StepOutcome:
        """A gate that was not approved: rejected by someone, or not decided in time."""
        if outcome == "timed_out":
            error = f"no decision within the gate's timeout; the task stopped at {name!r}"
            return cls("timed_out", error=error)
        return cls("rejected", error=f"rejected by {decided_by or 'the user'}")

    def stop(self, name: str) -> tuple[RunStatus, str] | None:
        """Why the run stops after this step (None: it goes on)."""
        if self.status == "failed":
            return "failed", f"step {name!r} failed: {self.error}"
        if self.status == "timed_out":
            return "failed", str(self.error)
        if self.status == "rejected":
            return "cancelled", f"step {name!r} was {self.error}"
        return None


@dataclass(frozen=True)
class TaskProgress:
    """Where a task run stands between two steps."""

    inputs: Mapping[str, Any]
    request: str
    results: Mapping[str, Any] = field(default_factory=dict)
    """Step name -> its result (None for a skipped step), for `results.*` expressions."""
    changes: tuple[ChangeEntry, ...] = ()
    approved: bool = False
    """The step just done was an approved gate."""
    stopped: tuple[RunStatus, str] | None = None
    """Set by a step that stops the run: the run's status and why."""

    @property
    def scope(self) -> dict[str, Any]:
        """What conditions, `args_from` and templates can read."""
        return {"inputs": self.inputs, "results": self.results, "request": self.request}


def advance(progress: TaskProgress, key: str, name: str, outcome: StepOutcome) -> TaskProgress:
    """The progress after step `name` (its result stored under `key`) ended with `outcome`."""
    results = progress.results
    if outcome.status in ("completed", "skipped"):
        value = outcome.result if outcome.status == "completed" else None
        results = {**results, key: value}
    return dataclasses.replace(
        progress,
        results=results,
        changes=progress.changes + outcome.changes,
        approved=outcome.approved_gate,
        stopped=outcome.stop(name),
    )


def forgive(progress: TaskProgress) -> TaskProgress:
    """The run goes on although a step stopped it (a failed post-task hook is a warning)."""
    return dataclasses.replace(progress, stopped=None)
