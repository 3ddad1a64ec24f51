"""Seed 004's task contract: `TaskExecutor(ai_engine, settings)` whose `execute()` yields
the seed's plain dicts (`task_start` first, `task_complete` last), with `_event` gates.

The run is the native `loopwright.tasks.TaskExecutor` (one runner, one safety layer, one
state file writer); this maps its events to the seed's dicts and its gates to the seed's
`asyncio.Event` handshake.

Token passthrough: an agent step's `stream` chunks are the native `StreamEvent` events,
mapped one to one in `to_seed_dict`. With a model that streams (Ollama, OpenAI-compatible,
Anthropic, the embedded model) each chunk is a piece of the model's text as it is
generated (coalesced deltas, see docs/streaming.md), then each tool result; with one that
does not, the model's thought and answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopwright.agent._process import new_run_id
from loopwright.errors import TaskParseError
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    FunctionResultEvent,
    StepCompleteEvent,
    StepStartEvent,
    StreamEvent,
    TaskCompleteEvent,
    TaskStartEvent,
)
from loopwright.models import Model
from loopwright.safety.operations import ChangeEntry, OperationSafety, UndoOutcome, execute_undo
from loopwright.tasks import StepDefinition as NativeStepDefinition
from loopwright.tasks import StepResult, TaskDefinition, TaskRunState, TaskSettings
from loopwright.tasks import TaskExecutor as NativeTaskExecutor
from loopwright.tasks._rollback import rollback_task_run
from loopwright.tools import Tool, ToolRegistry

DEFAULT_DATA_DIR = Path("~/.loopwright")
SEED_TYPES = (
    "task_start",
    "step_start",
    "function_result",
    "stream",
    "confirmation_required",
    "step_complete",
    "task_complete",
)

__all__ = [
    "ChangeEntry",
    "Settings",
    "StepDefinition",
    "StepResult",
    "TaskDefinition",
    "TaskExecutor",
    "TaskParseError",
    "TaskRunState",
    "to_seed_dict",
]

ToolsSpec = ToolRegistry | Mapping[str, Any] | Iterable[Tool | Callable[..., Any]]


class StepDefinition(NativeStepDefinition):
    """The native StepDefinition with the seed's positional order: name, type, description,
    tool, args_from, condition, message_template (the native fields by keyword)."""

    def __init__(
        self,
        name: str,
        type: Any,
        description: str = "",
        tool: str | None = None,
        args_from: Mapping[str, str] | None = None,
        condition: str | None = None,
        message_template: str | None = None,
        *,
        args: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        line: int | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            name=name,
            type=type,
            description=description,
            tool=tool,
            args=dict(args or {}),
            args_from=dict(args_from or {}),
            condition=condition,
            message_template=message_template,
            timeout_s=timeout_s,
            line=line,
            output_schema=output_schema,
        )


def tool_registry(tools: ToolsSpec) -> ToolRegistry:
    """A ToolRegistry from a registry, a list of functions/`@tool`s, or a name -> function
    dict (the seed's FUNCTION_REGISTRY; the key is the tool's name)."""
    if isinstance(tools, ToolRegistry):
        return tools
    if isinstance(tools, Mapping):
        registry = ToolRegistry()
        for name, item in tools.items():
            if isinstance(item, Tool):
                registry.register(
                    item if item.name == name else dataclasses.replace(item, name=name)
                )
            else:
                registry.register(Tool.from_function(item, name=str(name)))
        return registry
    return ToolRegistry(tools)


@dataclass
class Settings:
    """Seed 004's settings: where state goes, the function registry, the workspace."""

    data_dir: str | Path = DEFAULT_DATA_DIR
    """State files go to `{data_dir}/clients/{client_name}/task-runs/{task_id}.json`."""
    tools: Any = field(default_factory=list)
    """A list of functions or `@tool`s, a ToolRegistry, or a name -> function dict."""
    workspace: str | Path | None = None
    """The folder file tools work in (the current directory by default)."""
    gate_timeout_s: float = 300.0
    auto_gate: bool = True
    rollback_on_failure: bool = False

    def task_settings(self) -> TaskSettings:
        return TaskSettings(
            workspace=Path(self.workspace).resolve() if self.workspace else Path.cwd(),
            state_root=Path(self.data_dir).expanduser(),
            gate_timeout_s=self.gate_timeout_s,
            auto_gate=self.auto_gate,
            rollback_on_failure=self.rollback_on_failure,
        )


def to_seed_dict(event: Event) -> dict[str, Any] | None:
    """The seed's dict for one native event (None: a type the seed does not have)."""
    if isinstance(event, TaskStartEvent):
        return {
            "type": "task_start",
            "task_name": event.task_name,
            "total_steps": event.total_steps,
        }
    if isinstance(event, StepStartEvent):
        return {"type": "step_start", "step": event.step, "step_index": event.step_index}
    if isinstance(event, FunctionResultEvent):
        result = event.result if event.success else event.error
        return {
            "type": "function_result",
            "function": event.function,
            "result": result,
            "success": event.success,
        }
    if isinstance(event, StreamEvent):  # token deltas arrive here (module doc)
        return {"type": "stream", "chunk": event.chunk}
    if isinstance(event, ConfirmationRequiredEvent):
        return {
            "type": "confirmation_required",
            "request_id": event.request_id,
            "message": event.message,
        }
    if isinstance(event, StepCompleteEvent):
        data: dict[str, Any] = {"type": "step_complete", "step": event.step, "status": event.status}
        if event.error:
            data["error"] = event.error
        return data
    if isinstance(event, TaskCompleteEvent):
        return {
            "type": "task_complete",
            "task_name": event.task_name,
            "status": event.status,
            "summary": event.summary,
        }
    return None


class TaskExecutor:
    """Seed 004's executor: `TaskExecutor(ai_engine, settings)`, positional.

    `ai_engine` is any loopwright Model (agent steps use it). `native` is the loopwright
    TaskExecutor underneath; `task_id` is the id of the latest run (its state file name).
    """

    def __init__(self, ai_engine: Model | None, settings: Settings | None = None) -> None:
        self.ai_engine = ai_engine
        self.settings = settings or Settings()
        self.native = NativeTaskExecutor(
            ai_engine, tool_registry(self.settings.tools), settings=self.settings.task_settings()
        )
        self.task_id: str | None = None

    def state_path(self, client_name: str, task_id: str) -> Path:
        """`{data_dir}/clients/{client_name}/task-runs/{task_id}.json`."""
        assert self.native.exporter is not None
        return self.native.exporter.path_for(client_name, task_id)

    def confirm(self, request_id: str) -> bool:
        """Approve a pending gate (what setting its `_event` does)."""
        return self.native.gates.resolve(request_id, True, "user")

    def reject(self, request_id: str) -> bool:
        """Reject a pending gate: the task stops there (status `cancelled`)."""
        return self.native.gates.resolve(request_id, False, "user")

    async def execute(
        self,
        task_def: TaskDefinition,
        user_message: str = "",
        session_context: Mapping[str, Any] | None = None,
        client_name: str = "default",
    ) -> AsyncIterator[dict[str, Any]]:
        """Run the task, yielding the seed's dicts. A `confirmation_required` dict carries
        `_event` (an asyncio.Event): set it to approve; the task waits for it up to the gate
        timeout (300 s by default), then stops with the step `timed_out`."""
        self.task_id = run_id = new_run_id()
        watchers: set[asyncio.Task[None]] = set()
        try:
            events = self.native.execute(
                task_def, user_message, dict(session_context or {}), client_name, run_id=run_id
            )
            async for event in events:
                data = to_seed_dict(event)
                if data is None:
                    continue
                if data["type"] == "confirmation_required":
                    data["_event"] = self._gate_event(data["request_id"], watchers)
                yield data
        finally:
            for watcher in watchers:
                watcher.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)

    def _gate_event(self, request_id: str, watchers: set[asyncio.Task[None]]) -> asyncio.Event:
        """An asyncio.Event that approves the gate when someone sets it."""
        confirmed = asyncio.Event()

        async def approve_when_set() -> None:
            await confirmed.wait()
            self.confirm(request_id)

        watcher = asyncio.create_task(approve_when_set(), name=f"seed-gate-{request_id}")
        watchers.add(watcher)
        watcher.add_done_callback(watchers.discard)
        return confirmed

    async def run(
        self,
        task_def: TaskDefinition,
        user_message: str = "",
        session_context: Mapping[str, Any] | None = None,
        client_name: str = "default",
    ) -> list[dict[str, Any]]:
        """Every dict of a run (gates must be decided by someone else, or time out)."""
        return [d async for d in self.execute(task_def, user_message, session_context, client_name)]

    def load_state(self, client_name: str, task_id: str) -> TaskRunState:
        """The state file of a run, as a TaskRunState."""
        text = self.state_path(client_name, task_id).read_text(encoding="utf-8")
        return TaskRunState.from_dict(json.loads(text))

    def rollback_config(self, entry: ChangeEntry) -> UndoOutcome:
        """Undo one change (seed 004: "call `rollback_config` for each entry"), through the
        safety layer's `execute_undo`: a backed-up file is restored, a created one removed,
        a snapshot restored by its hook. Override it for resources of your own; an
        exception is that entry's failure (the others are still undone)."""
        safety = OperationSafety(
            workspace=self.native.settings.workspace,
            backup_dir=self.native.settings.workspace,
            snapshot_hooks=self.native.snapshot_hooks,
        )
        return execute_undo([entry], safety)[0]

    async def rollback(
        self, task_id: str, client_name: str = "default"
    ) -> AsyncIterator[dict[str, Any]]:
        """Roll a finished run back: its `change_log` newest first, `rollback_config` for
        each entry, as a run of its own yielding the seed's dicts (`task_start`, a
        `function_result` per entry, `task_complete`). Its state file then says
        `rolled_back` (when every entry was undone). A running or rolled-back run is a
        TaskRunError."""
        state = self.load_state(client_name, task_id)
        events = rollback_task_run(
            state,
            exporter=self.native.exporter,
            snapshot_hooks=self.native.snapshot_hooks,
            clock=self.native.clock,
            undo=self.rollback_config,
        )
        async for event in events:
            data = to_seed_dict(event)
            if data is not None:
                yield data
