"""Task runs over HTTP: the task files a server offers, started by name through the Runtime.

Their gates are decided through the API (in this process) or by a decision another process
leaves in the run store (`loopwright task approve`), which a waiting gate polls for.

A request names a task (its `name`, or its file's stem) in the server's task folder; it
never gives a path, so a client cannot make the server load an arbitrary file. Listing the
tasks (`/api/info`, the dashboard's form) reads the task files without importing any tool
file (`check_task`); a task's tool files are imported only when that task is started.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from loopwright.errors import ConfigurationError, TaskParseError
from loopwright.models import Model
from loopwright.runtime import RunHandle, Runtime
from loopwright.server._http import ApiError
from loopwright.tasks import TaskDefinition, TaskSettings, TaskSpec, check_task, load_task
from loopwright.tasks._loader import TASK_SUFFIXES, LoadedTask


class FolderTaskLauncher:
    """Starts the task files of one folder (their gates: the Runtime's GateBroker)."""

    def __init__(
        self,
        folder: str | Path,
        *,
        settings: TaskSettings | None = None,
        default_model: str | None = None,
    ) -> None:
        self.folder = Path(folder).resolve()
        if not self.folder.is_dir():
            raise ConfigurationError(f"task folder not found: {self.folder}")
        self.settings = settings or TaskSettings()
        self.default_model = default_model

    def names(self) -> list[str]:
        """The tasks offered: `name` of every valid task file in the folder."""
        return sorted({task.name for _, task in self._offered()})

    def describe(self) -> list[dict[str, Any]]:
        """Name, description and inputs (with defaults; None = required) of each task."""
        described = [
            {"name": task.name, "description": task.description, "inputs": task.inputs}
            for _, task in self._offered()
        ]
        return sorted(described, key=lambda t: str(t["name"]))

    def _offered(self) -> list[tuple[Path, TaskDefinition]]:
        """Each valid task file and its task, read without importing any of its tool files."""
        offered = []
        for file in self._files():
            checked = check_task(file)
            if checked.ok and checked.definition is not None:
                offered.append((file, checked.definition))
        return offered

    def start_task(
        self,
        runtime: Runtime,
        task: str,
        inputs: dict[str, Any],
        *,
        tenant: str,
        model: str | None = None,
    ) -> RunHandle:
        """Start the task on the runtime's engine. Its agent steps' model is in the spec (an
        engine elsewhere resolves it there); the embedded one gets it resolved here too."""
        loaded, spec = self._spec(task, inputs, tenant=tenant)
        if not any(step.type == "agent" for step in loaded.definition.steps):
            return runtime.start_task(spec)
        name = model or self.default_model
        if name is None:
            raise ApiError(422, "this task has agent steps: give a model spec", field="model")
        spec = dataclasses.replace(spec, model=name)
        if runtime.engine is not runtime.embedded:
            return runtime.start_task(spec)
        return runtime.start_task(spec, model=self._model(runtime, name))

    def _spec(
        self, task: str, inputs: dict[str, Any], *, tenant: str
    ) -> tuple[LoadedTask, TaskSpec]:
        loaded = self._find(task)
        definition = loaded.definition
        for name in inputs:
            if name not in definition.inputs:
                known = ", ".join(sorted(definition.inputs)) or "none"
                raise ApiError(
                    422, f"task {definition.name!r} has no such input (inputs: {known})",
                    field=f"inputs.{name}",
                )  # fmt: skip
        missing = sorted(
            n for n, default in definition.inputs.items() if default is None and n not in inputs
        )
        if missing:
            raise ApiError(422, "required input missing", field=f"inputs.{missing[0]}")
        spec = TaskSpec.of(
            definition, self.settings, inputs=inputs, request=definition.name, tenant=tenant
        )
        return loaded, spec

    def _model(self, runtime: Runtime, spec: str) -> Model:
        try:
            return runtime.models.resolve(spec)
        except ConfigurationError as exc:
            raise ApiError(422, str(exc), field="model") from None

    def _files(self) -> list[Path]:
        """The folder's task files: regular files only (reading a FIFO would wait for good)."""
        return sorted(p for p in self.folder.iterdir() if p.suffix in TASK_SUFFIXES and p.is_file())

    def _find(self, task: str) -> LoadedTask:
        """The task named `task`, loaded: only its own tool files are imported."""
        for file, definition in self._offered():
            if task in (definition.name, file.stem):
                try:
                    return load_task(file)
                except TaskParseError as exc:
                    raise ApiError(
                        422, f"task {task!r} cannot be loaded: {exc}", field="task"
                    ) from None
        offered = ", ".join(self.names()) or "none"
        raise ApiError(422, f"no task {task!r} on this server (offered: {offered})", field="task")
