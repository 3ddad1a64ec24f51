"""TaskExecutor: runs a task's steps in order and streams the run's events (seed 004)."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from loopwright.agent import new_run_id
from loopwright.clock import Clock, SystemClock
from loopwright.errors import ConfigurationError
from loopwright.events import Event
from loopwright.models import Model
from loopwright.safety.operations import OperationSafety, SnapshotHook
from loopwright.tasks._emitter import Emitter, EventSink, discard
from loopwright.tasks._gates import GateBroker
from loopwright.tasks._loader import LoadedTask
from loopwright.tasks._models import TaskDefinition, TaskRunState
from loopwright.tasks._run import TaskRun, TaskSettings
from loopwright.tasks._state import StateFileExporter
from loopwright.tools import ToolRegistry


class TaskExecutor:
    """Runs deterministic tasks: tool, agent and gate steps, with hooks, backups and state.

    Every event goes to `sink` first (e.g. `Runtime.publish`, which appends it to the run
    store), then out of `execute`. Gates wait on `gates` (a GateBroker shared with the CLI
    prompt and the HTTP API).
    """

    def __init__(
        self,
        model: Model | None,
        tools: ToolRegistry,
        *,
        settings: TaskSettings | None = None,
        sink: EventSink | None = None,
        gates: GateBroker | None = None,
        snapshot_hooks: Mapping[str, SnapshotHook] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.settings = settings or TaskSettings()
        self.sink = sink or discard
        self.gates = gates or GateBroker()
        self.snapshot_hooks = dict(snapshot_hooks or {})
        self.clock = clock or SystemClock()
        root = self.settings.state_root
        self.exporter = StateFileExporter(root) if root is not None else None

    @classmethod
    def for_task(
        cls, loaded: LoadedTask, model: Model | None = None, **kwargs: Any
    ) -> TaskExecutor:
        """An executor with a loaded task's tools and snapshot hooks."""
        kwargs.setdefault("snapshot_hooks", loaded.snapshot_hooks)
        return cls(model, loaded.registry, **kwargs)

    def backup_dir(self, client_name: str, run_id: str) -> Path:
        if self.exporter is not None:
            return self.exporter.backup_dir(client_name, run_id)
        return Path(tempfile.gettempdir()) / "loopwright-backups" / run_id

    def safety_for(self, client_name: str, run_id: str) -> OperationSafety:
        return OperationSafety(
            workspace=self.settings.workspace.resolve(),
            backup_dir=self.backup_dir(client_name, run_id),
            snapshot_hooks=self.snapshot_hooks,
        )

    async def execute(
        self,
        task_def: TaskDefinition,
        user_message: str = "",
        session_context: Mapping[str, Any] | None = None,
        client_name: str = "default",
        *,
        run_id: str | None = None,
    ) -> AsyncIterator[Event]:
        """Run the task; yield its events (run_started ... task_complete, run_finished).

        `session_context` holds the run's inputs (over the task's defaults).
        """
        inputs = resolve_inputs(task_def, session_context or {})
        run_id = run_id or new_run_id()
        emitter = Emitter(run_id, self.sink, self.clock, self.exporter)
        run = TaskRun(
            task=task_def,
            registry=self.tools,
            model=self.model,
            settings=self.settings,
            gates=self.gates,
            safety=self.safety_for(client_name, run_id),
            emitter=emitter,
            request=user_message,
            inputs=inputs,
            client_name=client_name,
        )
        async for event in run.events():
            yield event

    async def run(
        self,
        task_def: TaskDefinition,
        user_message: str = "",
        session_context: Mapping[str, Any] | None = None,
        client_name: str = "default",
        **kwargs: Any,
    ) -> TaskRunState:
        """Run to the end; the final state (its events went to the sink)."""
        from loopwright.tasks._state import rebuild_state

        events = [
            e
            async for e in self.execute(
                task_def, user_message, session_context, client_name, **kwargs
            )
        ]
        return rebuild_state(events)

    def run_sync(self, task_def: TaskDefinition, *args: Any, **kwargs: Any) -> TaskRunState:
        return asyncio.run(self.run(task_def, *args, **kwargs))


def resolve_inputs(task_def: TaskDefinition, given: Mapping[str, Any]) -> dict[str, Any]:
    """The task's input defaults overlaid with the given values; required ones must be there."""
    inputs = {**task_def.inputs, **given}
    missing = [name for name, value in inputs.items() if value is None and name in task_def.inputs]
    if missing:
        names = ", ".join(sorted(missing))
        raise ConfigurationError(
            f"task {task_def.name!r} needs input(s) {names} (pass --input name=value)"
        )
    return inputs
