"""Task run state: folded from the run's events, exported as the seed's JSON state file.

The event log is the state. `apply_event` is the one reducer, used live by the task run and
by `rebuild_state` for a finished or crashed run. `StateFileExporter` writes
`{root}/clients/{client_name}/task-runs/{task_id}.json` (seed 004); `StateWriter` does it
off the event loop (in a thread), after each step, at a gate and at the end, never per
event, and before the event that changed the state goes out.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from loopwright.errors import TaskRunError, UsageError
from loopwright.events import (
    ChangeRecordedEvent,
    Event,
    RunFinishedEvent,
    RunStartedEvent,
    StepCompleteEvent,
    StepStartEvent,
    TaskCompleteEvent,
    TaskStartEvent,
)
from loopwright.safety.operations import ChangeEntry
from loopwright.tasks._models import StepResult, TaskRunState

_FINAL_STATUS = {"completed": "completed", "rolled_back": "rolled_back", "cancelled": "cancelled"}


def apply_event(state: TaskRunState, event: Event, started: dict[str, tuple[str, float]]) -> None:
    """Update `state` with one event of its run (`started`: step -> (type, start time))."""
    if isinstance(event, RunStartedEvent):
        options: dict[str, Any] = event.options
        state.started_at = event.ts
        state.status = "running"
        state.client_name = event.tenant
        state.task_file = str(options.get("task_file") or "")
        state.inputs = dict(options.get("inputs") or {})
        state.workspace = str(options.get("workspace") or "")
    elif isinstance(event, TaskStartEvent):
        state.task_name = event.task_name
    elif isinstance(event, StepStartEvent):
        state.current_step = event.step
        started[event.step] = (event.step_type, event.ts)
    elif isinstance(event, ChangeRecordedEvent):
        state.change_log.append(
            ChangeEntry(
                event.action,
                event.resource_type,
                event.resource_id,
                event.backup_path,
                event.ts,
                event.step,
            )
        )
    elif isinstance(event, StepCompleteEvent):
        step_type, started_at = started.get(event.step, ("", None))
        state.steps_completed.append(
            StepResult(
                step_name=event.step,
                type=step_type,
                status=event.status,
                result=event.result,
                error=event.error,
                started_at=started_at,
                completed_at=event.ts,
            )
        )
        if event.status in {"completed", "skipped"}:
            state.current_step = None
    elif isinstance(event, TaskCompleteEvent):  # the seed's last word: its status is final
        state.summary = event.summary
        state.status = _FINAL_STATUS.get(event.status, "failed")  # type: ignore[assignment]
    elif isinstance(event, RunFinishedEvent):
        state.status = _FINAL_STATUS.get(event.status, "failed")  # type: ignore[assignment]


def rebuild_state(events: Iterable[Event]) -> TaskRunState:
    """The TaskRunState of a run, from its events (as stored)."""
    state: TaskRunState | None = None
    started: dict[str, tuple[str, float]] = {}
    for event in events:
        if state is None:
            if not isinstance(event, RunStartedEvent) or event.kind != "task":
                raise TaskRunError(f"run {event.run_id} is not a task run")
            state = TaskRunState(task_id=event.run_id)
        apply_event(state, event, started)
    if state is None:
        raise TaskRunError("no events: the run does not exist")
    return state


def check_folder_name(value: str, what: str) -> str:
    """`value` when it can name one folder under the state root, else a UsageError: a
    client name or task id comes from a caller, and `../../x` or `a/b` would put a state
    file (or backups) outside `clients/`."""
    if (
        not value
        or value in (".", "..")
        or any(c in value for c in "/\\\0")
        or value != value.strip()
        or len(value) > 255
    ):
        raise UsageError(
            f"{what} {value[:80]!r} cannot name a folder: use 1-255 characters without "
            "'/', '\\', NUL or surrounding spaces, and not '.' or '..'"
        )
    return value


class StateFileExporter:
    """Writes the seed's JSON state file, atomically, under `root`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()

    def path_for(self, client_name: str, task_id: str) -> Path:
        client = check_folder_name(client_name, "client name")
        run = check_folder_name(task_id, "task id")
        return self.root / "clients" / client / "task-runs" / f"{run}.json"

    def save(self, state: TaskRunState) -> Path:
        return self.write(state.to_dict())

    def write(self, data: dict[str, Any]) -> Path:
        """Write one state (TaskRunState.to_dict()) atomically: a reader sees old or new."""
        path = self.path_for(str(data["client_name"]), str(data["task_id"]))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, path)
        return path

    def backup_dir(self, client_name: str, task_id: str) -> Path:
        client = check_folder_name(client_name, "client name")
        run = check_folder_name(task_id, "task id")
        return self.root / "clients" / client / "task-runs" / run / "backups"

    def find(self, task_id: str) -> TaskRunState:
        """The exported state of a run, whichever client it belongs to."""
        for path in sorted(self.root.glob(f"clients/*/task-runs/{task_id}.json")):
            return TaskRunState.from_dict(json.loads(path.read_text(encoding="utf-8")))
        raise TaskRunError(f"no task run {task_id!r} under {self.root}")


class StateWriter:
    """Exports a run's state file off the event loop (in a thread) and waits for it, so the
    file holds a step before the step's event goes out (seed 004: "State updated after
    each step completion"; a consumer told `step_complete` finds the step in the file)."""

    def __init__(self, exporter: StateFileExporter) -> None:
        self.exporter = exporter

    async def save(self, state: TaskRunState) -> None:
        write = asyncio.ensure_future(asyncio.to_thread(self.exporter.write, state.to_dict()))
        try:
            await asyncio.shield(write)
        except asyncio.CancelledError:
            await write  # the thread writes on: let it end first (one writer at a time)
            raise
