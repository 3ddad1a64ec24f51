"""Seed 000's skill executor contract: `execute()` yields only the four TaskEvent classes
(first a TaskStatusEvent, last a TaskDoneEvent), mapped from the native run's events.

The run itself is the native `loopwright.skills.AutonomousSkillExecutor` (the one loop);
`native` gives it back for anything more (its own events, `build_agent`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from loopwright.agent import ExecutionResult
from loopwright.events import (
    Event,
    IterationStartedEvent,
    ModelResponseEvent,
    ParseErrorEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    RunStoppedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
)
from loopwright.models import Model
from loopwright.safety.scrub import Scrubber
from loopwright.skills import (
    AutonomousConfig,
    ContextLoader,
    DynamicInjector,
    Skill,
    StringSubstitutor,
)
from loopwright.skills import AutonomousSkillExecutor as NativeSkillExecutor
from loopwright.tools import ToolExecutor, ToolRegistry


@dataclass(frozen=True)
class TaskEvent:
    """Base of the seed's streaming events; `native` is the loopwright event behind it."""

    task_id: str
    timestamp: float


@dataclass(frozen=True)
class TaskStatusEvent(TaskEvent):
    """The task's state changed: `running` at the start, `stopped` when a guard ends it."""

    state: str
    message: str = ""
    native: Event | None = None


@dataclass(frozen=True)
class TaskMessageEvent(TaskEvent):
    """Progress: `kind` is `iteration`, `thought`, `tool_call`, `tool_result` or `answer`."""

    message: str
    kind: str = "message"
    iteration: int = 0
    native: Event | None = None


@dataclass(frozen=True)
class TaskErrorEvent(TaskEvent):
    """Something went wrong: a tool error, an unreadable reply, a failed model call."""

    error_code: str
    message: str
    native: Event | None = None


@dataclass(frozen=True)
class TaskDoneEvent(TaskEvent):
    """The end: `final_state` is `completed`, `stopped`, `failed` or `cancelled`."""

    final_state: str
    result: str | None = None
    reason: str | None = None
    native: Event | None = None


def to_task_event(event: Event, task_id: str) -> TaskEvent | None:
    """The seed event for one native event (None: nothing the seed shows)."""
    ts = event.ts
    if isinstance(event, RunStartedEvent):
        return TaskStatusEvent(task_id, ts, "running", f"started: {event.request}", event)
    if isinstance(event, IterationStartedEvent):
        text = f"Iteration {event.iteration_number}/{event.max_iterations}"
        return TaskMessageEvent(task_id, ts, text, "iteration", event.iteration_number, event)
    if isinstance(event, ModelResponseEvent):
        if event.final_answer is not None:
            return TaskMessageEvent(
                task_id, ts, event.final_answer, "answer", event.iteration_number, event
            )
        if event.thought:
            return TaskMessageEvent(
                task_id, ts, event.thought, "thought", event.iteration_number, event
            )
        return None
    if isinstance(event, ToolCallStartedEvent):
        text = f"Calling {event.tool_name}"
        return TaskMessageEvent(task_id, ts, text, "tool_call", event.iteration_number, event)
    if isinstance(event, ToolCallEvent):
        if event.is_error:
            return TaskErrorEvent(task_id, ts, "tool_error", event.result_summary, event)
        text = f"{event.tool_name}: {event.result_summary}"
        return TaskMessageEvent(task_id, ts, text, "tool_result", event.iteration_number, event)
    if isinstance(event, ParseErrorEvent):
        return TaskErrorEvent(task_id, ts, "parse_error", event.message, event)
    if isinstance(event, RunErrorEvent):
        return TaskErrorEvent(task_id, ts, event.error_type, event.message, event)
    if isinstance(event, RunStoppedEvent):
        return TaskStatusEvent(task_id, ts, "stopped", event.message, event)
    if isinstance(event, RunFinishedEvent):
        return TaskDoneEvent(task_id, ts, event.status, event.answer, event.reason, event)
    return None


class AutonomousSkillExecutor:
    """Seed 000's executor: the native skill run, streamed as TaskEvents.

    The model is given as `model=` (as on the native class); without it, the config's
    model spec is resolved (`AutonomousConfig.model`, the embedded model by default).
    """

    def __init__(
        self,
        skill: Skill,
        tool_registry: ToolRegistry,
        tool_executor: ToolExecutor | None = None,
        config: AutonomousConfig | None = None,
        context_loader: ContextLoader | None = None,
        dynamic_injector: DynamicInjector | None = None,
        string_substitutor: StringSubstitutor | None = None,
        *,
        model: Model | None = None,
        workspace: str | Path | None = None,
    ) -> None:
        self.native = NativeSkillExecutor(
            skill,
            tool_registry,
            tool_executor,
            config,
            context_loader,
            dynamic_injector,
            string_substitutor,
            model=model,
            workspace=workspace,
        )

    @property
    def config(self) -> AutonomousConfig:
        return self.native.config

    async def execute(
        self,
        user_request: str,
        task_id: str | None = None,
        session_id: str | None = None,
        tenant_id: str = "default",
    ) -> AsyncIterator[TaskEvent]:
        """Stream the run as TaskEvents: a TaskStatusEvent first, a TaskDoneEvent last."""
        task_id = task_id or f"task_{uuid.uuid4().hex[:12]}"
        started = done = False
        try:
            async for event in self.native.execute(user_request, task_id, session_id, tenant_id):
                mapped = to_task_event(event, task_id)
                if mapped is None:
                    continue
                if not started and not isinstance(mapped, TaskStatusEvent):
                    yield TaskStatusEvent(task_id, time.time(), "running")
                started, done = True, isinstance(mapped, TaskDoneEvent)
                yield mapped
        except Exception as exc:  # before the run could start (model, skill), or a model
            # raising something other than ModelError (a RuntimeError in a custom model)
            if done:  # after the end (a ScriptedModel with replies left over): not the run's
                raise
            now = time.time()
            if not started:
                yield TaskStatusEvent(task_id, now, "running")
            message = self._scrubbed(f"{type(exc).__name__}: {exc}")
            yield TaskErrorEvent(task_id, now, type(exc).__name__, message)
            yield TaskDoneEvent(task_id, now, "failed", None, "error")

    def _scrubbed(self, text: str) -> str:
        """An exception's text as the seed's error event shows it: scrubbed like the log."""
        executor = self.native.tool_executor
        scrubber = executor.scrubber if executor is not None else None
        return (scrubber or Scrubber.default()).scrub(text).text

    async def execute_sync(
        self,
        user_request: str,
        task_id: str | None = None,
        session_id: str | None = None,
        tenant_id: str = "default",
    ) -> ExecutionResult:
        """Run to the end and return the ExecutionResult (`success`, `iterations`, ...)."""
        return await self.native.execute_sync(user_request, task_id, session_id, tenant_id)
