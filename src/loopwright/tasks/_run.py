"""One task run: hooks, then steps in order, then hooks; every effect an event."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loopwright.agent import AgentOptions
from loopwright.errors import LoopwrightError
from loopwright.events import (
    Event,
    FunctionResult,
    RunErrored,
    RunFinished,
    RunStarted,
    RunStatus,
    StepComplete,
    StepStart,
    TaskComplete,
    TaskStart,
    Warning,
)
from loopwright.models import Model
from loopwright.safety.operations import OperationSafety, execute_undo
from loopwright.tasks._emitter import Emitter
from loopwright.tasks._expressions import compile_expression, render_template
from loopwright.tasks._gates import GateBroker
from loopwright.tasks._models import StepDefinition, TaskDefinition
from loopwright.tasks._steps import run_agent_step, run_gate_step, run_tool_step
from loopwright.tools import ToolContext, ToolExecutor, ToolRegistry

GateOutcome = Literal["approved", "rejected", "timed_out"]


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


@dataclass
class TaskRun:
    task: TaskDefinition
    registry: ToolRegistry
    model: Model | None
    settings: TaskSettings
    gates: GateBroker
    safety: OperationSafety
    emitter: Emitter
    request: str
    inputs: dict[str, Any]
    client_name: str
    results: dict[str, Any] = field(default_factory=dict)
    abort: tuple[RunStatus, str] | None = None
    just_approved: bool = False
    gate_outcome: GateOutcome = "rejected"
    decided_by: str = ""

    def __post_init__(self) -> None:
        context = ToolContext(run_id=self.run_id, workspace=self.settings.workspace)
        self.tool_executor = ToolExecutor(
            self.registry, context=context, timeout=self.settings.tool_timeout_s
        )

    @property
    def run_id(self) -> str:
        return self.emitter.run_id

    async def emit(self, event_type: type[Any], **fields: Any) -> Event:
        return await self.emitter.emit(event_type, **fields)

    @property
    def scope(self) -> dict[str, Any]:
        return {"inputs": self.inputs, "results": self.results, "request": self.request}

    def arguments(self, step: StepDefinition) -> dict[str, Any]:
        resolved = dict(step.args)
        for name, path in step.args_from.items():
            resolved[name] = compile_expression(path, path_only=True).evaluate(
                self.scope, strict=True
            )
        return resolved

    def render(self, template: str) -> str:
        return render_template(template, self.scope)

    def agent_prompt(self, instructions: str) -> str:
        done = {k: v for k, v in self.results.items() if v is not None}
        context = json.dumps({"inputs": self.inputs, "results": done}, default=str, indent=1)
        return (
            f"You are one step of the task {self.task.name!r}.\n\n{instructions}\n\n"
            f"The user's request: {self.request or '(none)'}\n\nWhat is known so far:\n{context}"
        )

    async def complete_step(self, step: StepDefinition, name: str, value: Any) -> Event:
        self.results[step.name] = value
        return await self.emit(StepComplete, step=name, status="completed", result=value)

    async def fail_step(self, name: str, error: str) -> Event:
        self.abort = ("failed", f"step {name!r} failed: {error}")
        return await self.emit(StepComplete, step=name, status="failed", error=error)

    async def stop_at_gate(self, name: str) -> Event:
        if self.gate_outcome == "timed_out":
            error = f"no decision within the gate's timeout; the task stopped at {name!r}"
            self.abort = ("failed", error)
            return await self.emit(StepComplete, step=name, status="timed_out", error=error)
        error = f"rejected by {self.decided_by or 'the user'}"
        self.abort = ("cancelled", f"step {name!r} was {error}")
        return await self.emit(StepComplete, step=name, status="rejected", error=error)

    # --- the run ---------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[Event]:
        yield await self.emit(
            RunStarted,
            kind="task",
            request=self.request or self.task.name,
            model=self.model.name if self.model is not None else "",
            tools=self.registry.names(),
            options={
                "task_file": self.task.source_path,
                "task_name": self.task.name,
                "inputs": self.inputs,
                "workspace": str(self.settings.workspace),
            },
            tenant=self.client_name,
        )
        yield await self.emit(TaskStart, task_name=self.task.name, total_steps=len(self.task.steps))
        try:
            async for event in self._body():
                yield event
        except asyncio.CancelledError:
            await self.emit(TaskComplete, task_name=self.task.name, status="cancelled")
            await self.emit(RunFinished, status="cancelled", reason="cancelled")
            raise
        except LoopwrightError as exc:
            yield await self.emit(RunErrored, error_type=type(exc).__name__, message=str(exc))
            self.abort = ("failed", str(exc))
        async for event in self._finish():
            yield event

    async def _body(self) -> AsyncIterator[Event]:
        async for event in self._hook("pre-task"):
            yield event
        if self.abort is not None:
            self.abort = ("failed", f"pre-task hook failed: {self.abort[1]}")
            return
        for index, step in enumerate(self.task.steps):
            async for event in self._step(step, index, step.name):
                yield event
            if self.abort is not None:
                return
        async for event in self._hook("post-task"):
            yield event
        if self.abort is not None:
            yield await self.emit(Warning, message=f"post-task hook failed: {self.abort[1]}")
            self.abort = None

    async def _hook(self, kind: str) -> AsyncIterator[Event]:
        hook = self.task.hooks.get(kind)
        if hook is None:
            return
        for index, step in enumerate(hook.steps):
            async for event in self._step(step, index, f"{kind}:{step.name}"):
                yield event
            if self.abort is not None:
                return

    async def _step(self, step: StepDefinition, index: int, name: str) -> AsyncIterator[Event]:
        yield await self.emit(StepStart, step=name, step_index=index, step_type=step.type)
        approved_before, self.just_approved = self.just_approved, False
        if step.condition is not None:
            try:
                holds = compile_expression(step.condition).evaluate(self.scope)
            except LoopwrightError as exc:
                yield await self.fail_step(name, f"condition {step.condition!r}: {exc}")
                return
            if not holds:
                self.results[step.name] = None
                yield await self.emit(
                    StepComplete,
                    step=name,
                    status="skipped",
                    result=f"condition false: {step.condition}",
                )
                return
        self.just_approved = approved_before
        handler = {"tool": run_tool_step, "agent": run_agent_step, "gate": run_gate_step}
        async for event in handler[step.type](self, step, name):
            yield event
        if step.type != "gate":
            self.just_approved = False

    async def _finish(self) -> AsyncIterator[Event]:
        status: RunStatus = "completed"
        summary = f"{len(self.task.steps)} steps done"
        if self.abort is not None:
            status, summary = self.abort
            changes = len(self.emitter.state.change_log)
            if changes and self.settings.rollback_on_failure:
                undone = 0
                async for event in self._undo():
                    undone += isinstance(event, FunctionResult) and event.success
                    yield event
                status = "rolled_back" if undone == changes else "failed"
                summary += f"; {undone} of {changes} change(s) rolled back"
            elif changes:
                summary += (
                    f"; {changes} change(s) can be undone with: "
                    f"loopwright task rollback {self.run_id}"
                )
        yield await self.emit(
            TaskComplete, task_name=self.task.name, status=status, summary=summary
        )
        state = self.emitter.state
        yield await self.emit(
            RunFinished,
            status=status,
            answer=summary,
            reason=None if status == "completed" else status,
            steps=len(state.steps_completed),
            partial=None
            if status == "completed"
            else {"failed_step": state.current_step, "changes": len(state.change_log)},
        )

    async def _undo(self) -> AsyncIterator[Event]:
        for outcome in execute_undo(self.emitter.state.change_log, self.safety):
            yield await self.emit(
                FunctionResult,
                step=outcome.entry.step,
                function="undo",
                arguments={"resource_id": outcome.entry.resource_id},
                result=outcome.message if outcome.ok else None,
                success=outcome.ok,
                error=None if outcome.ok else outcome.message,
            )
