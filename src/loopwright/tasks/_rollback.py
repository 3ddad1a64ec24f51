"""Rolling back a task run: a new task run (parent = the original) that walks its change log."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

from loopwright.agent._process import new_run_id
from loopwright.clock import Clock, SystemClock
from loopwright.effects import EventLog
from loopwright.effects._log import EventSink, Recorder
from loopwright.errors import TaskRunError
from loopwright.events import (
    Event,
    FunctionResultEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TaskCompleteEvent,
    TaskStartEvent,
)
from loopwright.safety.operations import (
    ChangeEntry,
    OperationSafety,
    SnapshotHook,
    UndoOutcome,
    execute_undo,
)
from loopwright.safety.scrub import Scrubber
from loopwright.tasks._models import TaskRunState
from loopwright.tasks._state import StateFileExporter


async def rollback_task_run(
    state: TaskRunState,
    *,
    sink: EventSink | None = None,
    snapshot_hooks: Mapping[str, SnapshotHook] | None = None,
    exporter: StateFileExporter | None = None,
    clock: Clock | None = None,
    run_id: str | None = None,
    recorder: Recorder | None = None,
    undo: Callable[[ChangeEntry], UndoOutcome] | None = None,
) -> AsyncIterator[Event]:
    """Undo `state.change_log` newest first; events of a new run with parent_run_id set,
    stored through `recorder` (a Runtime's writer: `Runtime.rollback`) when given.
    `undo` restores one entry (seed 004's `rollback_config`); by default the safety layer's
    `execute_undo` does."""
    _check_can_roll_back(state)
    log = EventLog(
        run_id or new_run_id(),
        clock=clock or SystemClock(),
        scrubber=Scrubber.default(),
        sink=sink,
        recorder=recorder,
    )
    log.listening = True  # the events are yielded, even with no sink

    async def emit(draft: Event) -> Event:
        event = await log.append(draft)
        assert event is not None
        return event

    changes = len(state.change_log)
    name = f"rollback:{state.task_name}"
    yield await emit(_started(state))
    await log.flush()  # the rollback run is stored before it touches a file
    yield await emit(TaskStartEvent(task_name=name, total_steps=changes))
    safety = OperationSafety(
        workspace=Path(state.workspace or "."),
        backup_dir=Path(state.workspace or "."),
        snapshot_hooks=dict(snapshot_hooks or {}),
    )
    failures = 0
    if undo is None:
        outcomes = execute_undo(state.change_log, safety)
    else:
        outcomes = [_undone(undo, entry) for entry in reversed(state.change_log)]
    for outcome in outcomes:
        failures += not outcome.ok
        yield await emit(_undone_event(outcome))
    summary = f"undid {changes - failures} of {changes} change(s) of {state.task_id}"
    status = "completed" if failures == 0 else "failed"
    yield await emit(TaskCompleteEvent(task_name=name, status=status, summary=summary))
    yield await emit(_finished(changes, failures, summary))
    if failures == 0:
        state.status = "rolled_back"
        state.summary = f"rolled back by {log.run_id}"
        if exporter is not None:
            exporter.save(state)


def _undone(undo: Callable[[ChangeEntry], UndoOutcome], entry: ChangeEntry) -> UndoOutcome:
    """One entry undone by `undo`; an exception is that entry's failure, not the run's."""
    try:
        return undo(entry)
    except Exception as exc:
        return UndoOutcome(entry, False, f"{type(exc).__name__}: {exc}")


def _check_can_roll_back(state: TaskRunState) -> None:
    if state.status == "rolled_back":
        raise TaskRunError(f"task run {state.task_id} was already rolled back")
    if state.status == "running":
        raise TaskRunError(f"task run {state.task_id} is still running")


def _started(state: TaskRunState) -> RunStartedEvent:
    return RunStartedEvent(
        kind="task",
        request=f"rollback {state.task_id}",
        model="",
        tools=[],
        options={"rollback_of": state.task_id, "task_file": state.task_file},
        tenant=state.client_name,
        parent_run_id=state.task_id,
    )


def _undone_event(outcome: UndoOutcome) -> FunctionResultEvent:
    entry = outcome.entry
    return FunctionResultEvent(
        step=entry.step,
        function="undo",
        arguments={"action": entry.action, "resource_id": entry.resource_id},
        result=outcome.message if outcome.ok else None,
        success=outcome.ok,
        error=None if outcome.ok else outcome.message,
    )


def _finished(changes: int, failures: int, summary: str) -> RunFinishedEvent:
    completed = failures == 0
    return RunFinishedEvent(
        status="completed" if completed else "failed",
        answer=summary,
        reason=None if completed else "failed",
        usage={},
        cost=0.0,
        steps=changes,
        partial=None if completed else {"undo_failures": failures},
    )
