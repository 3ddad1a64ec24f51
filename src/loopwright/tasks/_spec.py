"""TaskSpec: a task run as plain data; TaskPlan: everything one run needs, resolved once.

A `TaskSpec` is what `run_started` records (under `spec`), so a run can be resumed from
its log alone: the task file, the inputs, the request, the tenant, the model spec, where
the workspace and the state files are, and how gates and failures behave. Never a secret
(a model's key comes from the environment of the process that runs it).

`prepare_task(spec, model=...)` loads the file and its tools into a `TaskPlan`; the task
runner (`run_task(plan, fx)`) runs a plan through the run's Effects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopwright.agent import AgentOptions
from loopwright.effects._log import EventSink
from loopwright.errors import ConfigurationError
from loopwright.models import Model
from loopwright.safety.operations import SnapshotHook
from loopwright.tasks._loader import load_task
from loopwright.tasks._models import TaskDefinition
from loopwright.tools import ToolRegistry

SPEC_VERSION = 1
"""The version of TaskSpec's dict form (bump it, and keep reading the old ones, on a change)."""


@dataclass
class TaskSettings:
    """How task runs behave (seed 004's `settings`)."""

    workspace: Path = field(default_factory=Path.cwd)
    state_root: Path | None = None
    """Where the JSON state files and backups go (`clients/{client}/task-runs/`)."""
    gate_timeout_s: float = 300.0
    auto_gate: bool = True
    """Add a gate before a write/destructive tool step that no gate step just approved."""
    rollback_on_failure: bool = False
    agent_options: AgentOptions = field(default_factory=lambda: AgentOptions(tier="trivial"))
    tool_timeout_s: float = 60.0
    forward_agent_events: bool = True
    """Send an agent step's own run (its events, parent_run_id = the task run) to the sink."""


@dataclass(frozen=True)
class TaskSpec:
    """A task run as plain data (recorded in its `run_started`; never a secret)."""

    task_file: str
    """The task file, as an absolute path ('' for a task defined in code: not resumable)."""
    inputs: Mapping[str, Any] = field(default_factory=dict)
    request: str = ""
    tenant: str = "default"
    model: str | None = None
    """The model spec for agent steps (`local`, `ollama:NAME`...); None: no agent steps."""
    base_url: str | None = None
    workspace: str = "."
    state_root: str | None = None
    gate_timeout_s: float = 300.0
    auto_gate: bool = True
    rollback_on_failure: bool = False
    tool_timeout_s: float = 60.0
    agent_options: Mapping[str, Any] = field(default_factory=dict)
    """AgentOptions (as a dict) for agent steps; empty: the task runner's default."""
    version: int = SPEC_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "task_file": self.task_file,
            "inputs": dict(self.inputs),
            "request": self.request,
            "tenant": self.tenant,
            "model": self.model,
            "base_url": self.base_url,
            "workspace": self.workspace,
            "state_root": self.state_root,
            "gate_timeout_s": self.gate_timeout_s,
            "auto_gate": self.auto_gate,
            "rollback_on_failure": self.rollback_on_failure,
            "tool_timeout_s": self.tool_timeout_s,
            "agent_options": dict(self.agent_options),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskSpec:
        """The spec a dict describes; a ConfigurationError names a version or key it lacks."""
        version = data.get("version")
        if version != SPEC_VERSION:
            raise ConfigurationError(
                f"task spec version {version!r} is not supported (this loopwright reads "
                f"version {SPEC_VERSION}); run it with the loopwright that started it"
            )
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise ConfigurationError(f"task spec: unknown key(s) {', '.join(unknown)}")
        if not isinstance(data.get("task_file"), str):
            raise ConfigurationError("task spec: 'task_file' (a path) is required")
        fields = dict(data)
        fields["inputs"] = dict(fields.get("inputs") or {})
        fields["agent_options"] = dict(fields.get("agent_options") or {})
        return cls(**fields)

    @classmethod
    def of(
        cls,
        task: TaskDefinition,
        settings: TaskSettings,
        *,
        inputs: Mapping[str, Any],
        request: str = "",
        tenant: str = "default",
        model: str | None = None,
        base_url: str | None = None,
    ) -> TaskSpec:
        """The spec of a run of `task` with `settings` (as TaskExecutor starts one)."""
        source = task.source_path
        return cls(
            task_file=str(Path(source).resolve()) if source else "",
            inputs=dict(inputs),
            request=request,
            tenant=tenant,
            model=model,
            base_url=base_url,
            workspace=str(settings.workspace),
            state_root=str(settings.state_root) if settings.state_root is not None else None,
            gate_timeout_s=settings.gate_timeout_s,
            auto_gate=settings.auto_gate,
            rollback_on_failure=settings.rollback_on_failure,
            tool_timeout_s=settings.tool_timeout_s,
            agent_options=settings.agent_options.to_dict(),
        )

    def settings(self) -> TaskSettings:
        settings = TaskSettings(
            workspace=Path(self.workspace).resolve(),
            state_root=Path(self.state_root).expanduser() if self.state_root else None,
            gate_timeout_s=self.gate_timeout_s,
            auto_gate=self.auto_gate,
            rollback_on_failure=self.rollback_on_failure,
            tool_timeout_s=self.tool_timeout_s,
        )
        if self.agent_options:
            settings.agent_options = AgentOptions.from_dict(dict(self.agent_options))
        return settings


@dataclass(frozen=True)
class TaskPlan:
    """One task run, resolved: the definition, its tools, model, settings and inputs."""

    spec: TaskSpec
    task: TaskDefinition
    registry: ToolRegistry
    model: Model | None
    settings: TaskSettings
    inputs: Mapping[str, Any]
    """The task's input defaults overlaid with the spec's inputs (all present)."""
    snapshot_hooks: Mapping[str, SnapshotHook] = field(default_factory=dict)
    agent_events: EventSink | None = None
    """Where an agent step's own run sends its events (None: nowhere)."""


def prepare_task(
    spec: TaskSpec, *, model: Model | None, agent_events: EventSink | None = None
) -> TaskPlan:
    """Load the spec's task file and its tools; check the inputs.

    `model` is the model for agent steps (the caller resolves `spec.model`); with None an
    agent step fails with a clear message.
    """
    if not spec.task_file:
        raise ConfigurationError("task spec has no task_file: a task defined in code")
    loaded = load_task(spec.task_file)
    return TaskPlan(
        spec=spec,
        task=loaded.definition,
        registry=loaded.registry,
        model=model,
        settings=spec.settings(),
        inputs=resolve_inputs(loaded.definition, spec.inputs),
        snapshot_hooks=loaded.snapshot_hooks,
        agent_events=agent_events,
    )


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
