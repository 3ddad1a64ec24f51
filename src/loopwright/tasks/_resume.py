"""Resuming a task run from its recorded events (after a crash, in a new process).

`recorded_effects` is the wiring: the recorded events become a `Recording` that serves the
effects already made (tool results, backups, decided gates), over live effects whose log
re-makes (and checks) the recorded events before it appends new ones. The recorded
TaskSpec runs again through them: completed steps are not repeated, a gate that was waiting
waits again, and a tool step that started without a recorded result runs again only if its
tool is declared idempotent (otherwise it fails: "effect unknown").

A user resumes a run with `Runtime(store).resume(run_id)`, which holds the run's lease and
stores its events; `resume_task` and `resume_effects` are deprecated doors that do neither.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from loopwright.clock import Clock
from loopwright.effects import Effects, EventLog, Gatekeeper, LiveEffects
from loopwright.effects._log import EventSink, Recorder
from loopwright.effects._replay import replaying
from loopwright.errors import UsageError
from loopwright.events import Event, RunStartedEvent
from loopwright.models import Model
from loopwright.safety.scrub import Scrubber
from loopwright.tasks._models import TaskRunState
from loopwright.tasks._run import run_task
from loopwright.tasks._spec import TaskSpec, prepare_task

RESUME_INSTEAD = (
    "resume a task run with `await Runtime(store).resume(run_id)` (loopwright.runtime): it "
    "holds the run's lease and stores its new events"
)


def resume_effects(
    recorded: Sequence[Event],
    *,
    gates: Gatekeeper | None = None,
    sink: EventSink | None = None,
    recorder: Recorder | None = None,
    clock: Clock | None = None,
    scrubber: Scrubber | None = None,
) -> Effects:
    """Deprecated: `Runtime.resume`. Effects for the next process of a run: the recorded
    ones first, then live."""
    warnings.warn(f"resume_effects is deprecated: {RESUME_INSTEAD}", DeprecationWarning, 2)
    return recorded_effects(
        recorded, gates=gates, sink=sink, recorder=recorder, clock=clock, scrubber=scrubber
    )


def recorded_effects(
    recorded: Sequence[Event],
    *,
    gates: Gatekeeper | None = None,
    sink: EventSink | None = None,
    recorder: Recorder | None = None,
    clock: Clock | None = None,
    scrubber: Scrubber | None = None,
) -> Effects:
    """Effects for the next process of a run: the recorded ones first, then live."""
    if not recorded:
        raise UsageError("nothing to resume: the run has no events")
    log = EventLog(
        recorded[0].run_id,
        clock=clock,
        scrubber=scrubber,
        sink=sink,
        recorder=recorder,
        recorded=recorded,
    )
    live = LiveEffects(log, clock=clock, gates=gates)
    return replaying(live, recorded)


def recorded_task_spec(recorded: Sequence[Event]) -> TaskSpec:
    """The TaskSpec a task run was started from (in its `run_started`)."""
    first = recorded[0] if recorded else None
    if not isinstance(first, RunStartedEvent) or first.kind != "task":
        raise UsageError("not a task run: its first event is not a task's run_started")
    if first.spec is None:
        raise UsageError(
            f"task run {first.run_id} has no recorded TaskSpec (started by an older "
            "loopwright): it cannot be resumed; roll it back and run the task again"
        )
    return TaskSpec.from_dict(first.spec)


async def resume_task(
    recorded: Sequence[Event],
    *,
    model: Model | None = None,
    gates: Gatekeeper | None = None,
    sink: EventSink | None = None,
    recorder: Recorder | None = None,
    scrubber: Scrubber | None = None,
) -> TaskRunState:
    """Deprecated: `Runtime.resume`. Run an interrupted task run to its end, from its
    recorded events alone (no lease is held, nothing is stored but through `recorder`)."""
    warnings.warn(f"resume_task is deprecated: {RESUME_INSTEAD}", DeprecationWarning, 2)
    plan = prepare_task(recorded_task_spec(recorded), model=model)
    fx = recorded_effects(
        recorded, gates=gates, sink=sink, recorder=recorder, scrubber=scrubber or Scrubber.default()
    )
    return await run_task(plan, fx)
