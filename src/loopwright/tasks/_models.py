"""Task data: definitions read from task files, and the state of a task run (seed 004)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from loopwright.safety.operations import ChangeEntry

StepType = Literal["tool", "agent", "gate"]
STEP_TYPES: tuple[str, ...] = ("tool", "agent", "gate")
TaskStatus = Literal["pending", "running", "completed", "failed", "cancelled", "rolled_back"]
StepStatus = Literal["completed", "failed", "skipped", "rejected", "timed_out"]
HOOK_NAMES: dict[str, tuple[str, ...]] = {
    "pre-task": ("pre-task.md", "pre-analysis.md"),
    "post-task": ("post-task.md", "post-analysis.md"),
}


@dataclass(frozen=True)
class StepDefinition:
    """One step of a task: a tool call, an agent's interpretation, or a human approval."""

    name: str
    type: StepType
    description: str = ""
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    args_from: dict[str, str] = field(default_factory=dict)
    """Argument name -> path expression (`inputs.env`, `results.list_keys.count`)."""
    condition: str | None = None
    message_template: str | None = None
    timeout_s: float | None = None
    """Gate steps: how long to wait for a decision (the executor's default otherwise)."""
    line: int | None = None
    output_schema: dict[str, Any] | None = None
    """Agent steps: a JSON Schema the agent's answer must match; the step's result is then
    the validated value (docs/structured-output.md)."""


@dataclass(frozen=True)
class HookDefinition:
    """A Markdown hook file: front-matter steps, or an agent's instructions in the body."""

    kind: str
    path: str
    steps: tuple[StepDefinition, ...]


@dataclass(frozen=True)
class TaskDefinition:
    """A task file: named steps run in order, with hooks around them (seed fields first)."""

    name: str
    agent: str = ""
    trigger_keywords: tuple[str, ...] = ()
    risk_level: str = "low"
    steps: Sequence[StepDefinition] = ()
    """In order (a tuple from a task file; seed 004's code gives a list)."""
    hooks: dict[str, HookDefinition] = field(default_factory=dict)
    description: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    """Input name -> default value (None: the input is required)."""
    tools: tuple[str, ...] = ()
    """Tool specs: built-in names, `file.py` (every tool in it), `file.py:function`."""
    source_path: str = ""

    def step(self, name: str) -> StepDefinition:
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(name)


@dataclass(frozen=True)
class StepResult:
    step_name: str
    type: str
    status: StepStatus
    result: Any = None
    error: str | None = None
    started_at: float | None = None
    completed_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepResult:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass
class TaskRunState:
    """Where a task run stands. Rebuilt from the run's events (`tasks.rebuild_state`)."""

    task_id: str
    task_name: str = ""
    status: TaskStatus = "pending"
    started_at: float | None = None
    steps_completed: list[StepResult] = field(default_factory=list)
    current_step: str | None = None
    change_log: list[ChangeEntry] = field(default_factory=list)
    client_name: str = "default"
    task_file: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    workspace: str = ""
    summary: str = ""

    @property
    def success(self) -> bool:
        """The run completed (every step done or skipped)."""
        return self.status == "completed"

    def result_of(self, step_name: str) -> StepResult | None:
        for result in reversed(self.steps_completed):
            if result.step_name == step_name:
                return result
        return None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["format"] = "loopwright.task-run/1"
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskRunState:
        return cls(
            task_id=str(data["task_id"]),
            task_name=str(data.get("task_name") or ""),
            status=data.get("status") or "pending",
            started_at=data.get("started_at"),
            steps_completed=[StepResult.from_dict(s) for s in data.get("steps_completed") or []],
            current_step=data.get("current_step"),
            change_log=[ChangeEntry.from_dict(c) for c in data.get("change_log") or []],
            client_name=str(data.get("client_name") or "default"),
            task_file=str(data.get("task_file") or ""),
            inputs=dict(data.get("inputs") or {}),
            workspace=str(data.get("workspace") or ""),
            summary=str(data.get("summary") or ""),
        )
