"""The invocations a task run hands to `fx.call_tool` besides a tool's own: the backup
before a write, one attempt of an agent step, and the rollback of a failed run.

Each is a small callable object rather than a closure, so an engine that performs effects
somewhere else (the Temporal engine runs them in activities on a worker) can read what to
do from its fields and rebuild the same invocation there; in-process engines just call it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from loopwright.agent import AgentExecutor, ExecutionResult
from loopwright.agent._subagent import run_child
from loopwright.effects._log import send_event
from loopwright.errors import LoopwrightError
from loopwright.events import (
    Event,
    ModelResponseEvent,
    ModelTextDeltaEvent,
    StreamEvent,
    ToolCallEvent,
)
from loopwright.messages import ToolCall, ToolResult
from loopwright.safety.operations import ChangeEntry, before_operation, execute_undo
from loopwright.tasks._context import StepContext
from loopwright.tools import ToolRegistry


@dataclass
class BackupInvocation:
    """Back up what `tool` with `arguments` is about to change (step `step`); the result's
    content is the change entries as JSON, or an error's message."""

    ctx: StepContext
    tool: str
    arguments: dict[str, Any]
    step: str

    async def __call__(self, call: ToolCall) -> ToolResult:
        tool = self.ctx.plan.registry.get(self.tool)
        try:
            entries = before_operation(
                tool, self.arguments, self.ctx.safety, step=self.step, now=time.time()
            )
        except LoopwrightError as exc:
            return ToolResult(call.id, call.name, str(exc), True)
        return ToolResult(call.id, call.name, json.dumps([e.to_dict() for e in entries]))


@dataclass
class UndoInvocation:
    """Restore `changes` (newest first, as `execute_undo` does); the result's content is
    each entry's outcome as JSON: [{"entry": ..., "ok": ..., "message": ...}]."""

    ctx: StepContext
    changes: tuple[ChangeEntry, ...]

    async def __call__(self, call: ToolCall) -> ToolResult:
        outcomes = execute_undo(self.changes, self.ctx.safety)
        data = [{"entry": o.entry.to_dict(), "ok": o.ok, "message": o.message} for o in outcomes]
        return ToolResult(call.id, call.name, json.dumps(data))


@dataclass(frozen=True)
class AgentAttempt:
    """How one run of an agent step's agent ended."""

    ok: bool
    answer: str = ""
    why: str = ""
    chunks: tuple[str, ...] = ()

    def to_json(self) -> str:
        data = {"ok": self.ok, "answer": self.answer, "why": self.why, "chunks": self.chunks}
        return json.dumps(data)

    @classmethod
    def from_json(cls, content: str) -> AgentAttempt:
        try:
            data = json.loads(content)
            return cls(bool(data["ok"]), data["answer"], data["why"], tuple(data["chunks"]))
        except (ValueError, KeyError, TypeError):  # a recorded result the scrubber cut
            return cls(False, why=f"the agent's recorded result cannot be read: {content[:80]}")


@dataclass
class AgentInvocation:
    """One attempt (1: read-only tools, 2: none) of agent step `step` with `prompt`; its
    result's content is an `AgentAttempt` as JSON. `streamed` is set once it ran here (its
    text went out as `stream` events on the way)."""

    ctx: StepContext
    prompt: str
    step: str
    attempt: int
    schema: dict[str, Any] | None = None
    streamed: bool = False

    async def __call__(self, call: ToolCall) -> ToolResult:
        self.streamed = True
        outcome = await stream_agent(
            self.ctx, self.prompt, self.step, call.id, attempt=self.attempt, schema=self.schema
        )
        return ToolResult(call.id, call.name, outcome.to_json())


async def stream_agent(
    ctx: StepContext,
    prompt: str,
    name: str,
    call_id: str,
    *,
    attempt: int,
    schema: dict[str, Any] | None = None,
) -> AgentAttempt:
    """Run the agent as the run the task run's call `call_id` starts (`run_child`: its
    context derived from the task run's, as a sub-agent's is from its lead's); its
    thoughts, answer and tool results become `stream` events. A model that streams has its
    text passed through as it is generated (seed 004's token passthrough): each coalesced
    delta is a `stream` chunk, and that reply's thought and answer are not repeated after
    it."""
    plan = ctx.plan
    assert plan.model is not None
    tools = _read_only(plan.registry) if attempt == 1 else ToolRegistry()
    agent = AgentExecutor(
        plan.model,
        tools,
        options=plan.settings.agent_options,
        workspace=plan.settings.workspace,
        output_type=schema,
        scrubber=ctx.fx.log.scrubber,  # the task run's: its secrets (a worker's too) included
    )
    chunks: list[str] = []
    forward = plan.agent_events if plan.settings.forward_agent_events else None
    streamed = False

    async def on_event(event: Event) -> None:
        nonlocal streamed
        if forward is not None:
            await send_event(forward, event)
        texts: tuple[str | None, ...] = ()
        if isinstance(event, ModelTextDeltaEvent):
            streamed = True
            texts = (event.text,)
        elif isinstance(event, ModelResponseEvent):
            texts = () if streamed else (event.thought, event.final_answer)
            streamed = False
        elif isinstance(event, ToolCallEvent):
            texts = (f"[{event.tool_name}] {event.result_summary}",)
        for text in texts:
            if text:
                chunks.append(text)
                await ctx.journal.append(StreamEvent(step=name, chunk=text))

    try:  # a resumed task run that runs it again resumes it from its own stored events
        result: ExecutionResult = await run_child(agent, prompt, ctx.run, call_id, sink=on_event)
    except LoopwrightError as exc:
        return AgentAttempt(False, why=f"{type(exc).__name__}: {exc}", chunks=tuple(chunks))
    why = "" if result.success else (result.message or result.reason or result.status)
    return AgentAttempt(result.success, result.answer or "", why, tuple(chunks))


def _read_only(registry: ToolRegistry) -> ToolRegistry:
    return ToolRegistry(t for t in registry if t.effect == "read")
