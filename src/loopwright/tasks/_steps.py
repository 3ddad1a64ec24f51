"""The step handlers: tool, agent and gate steps. Each returns a `StepOutcome`.

A handler appends the step's events (gates, backups, the tool's result, the agent's text)
through the run's journal and performs every effect through the run's Effects: a tool call
with `fx.call_tool` (the tool's declared idempotency decides whether a call interrupted by
a crash is run again), a gate with `fx.gate`, the backup before a write as an effect too.
The run (tasks/_run.py) appends `step_complete` from the outcome and decides what is next.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from loopwright.effects import GateRequest, GateVerdict
from loopwright.effects._replay import backup_call_id
from loopwright.errors import LoopwrightError
from loopwright.events import (
    ChangeRecordedEvent,
    ConfirmationRequiredEvent,
    FunctionResultEvent,
    GateDecisionEvent,
    StreamEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
    WarningEvent,
)
from loopwright.events._types import child_run_id
from loopwright.messages import ToolCall
from loopwright.prompts._turn_notes import summarize
from loopwright.safety.operations import ChangeEntry, classify_operation
from loopwright.tasks._context import StepContext, gate_request_id, tool_call_id
from loopwright.tasks._expressions import compile_expression, render_template
from loopwright.tasks._invocations import AgentAttempt, AgentInvocation, BackupInvocation
from loopwright.tasks._models import StepDefinition
from loopwright.tasks._progress import StepOutcome, TaskProgress
from loopwright.tools import Tool

StepHandler = Callable[[StepContext, StepDefinition, str, TaskProgress], Awaitable[StepOutcome]]
SIMPLE_PROMPT = (
    "{instructions}\n\nRequest: {request}\n\n"
    "Reply with your final answer right away, in a few sentences. Do not call any tool."
)


def decode_result(content: str) -> Any:
    """A tool's rendered output as data again (JSON), or the text itself."""
    try:
        return json.loads(content)
    except (json.JSONDecodeError, ValueError):
        return content


def step_arguments(step: StepDefinition, scope: dict[str, Any]) -> dict[str, Any]:
    resolved = dict(step.args)
    for name, path in step.args_from.items():
        resolved[name] = compile_expression(path, path_only=True).evaluate(scope, strict=True)
    return resolved


# --- tool steps ----------------------------------------------------------------------------


async def run_tool_step(
    ctx: StepContext, step: StepDefinition, name: str, progress: TaskProgress
) -> StepOutcome:
    assert step.tool is not None
    tool = ctx.plan.registry.get(step.tool)
    try:
        arguments = step_arguments(step, progress.scope)
    except LoopwrightError as exc:
        return StepOutcome.failed(str(exc))
    operation = classify_operation(tool, arguments)
    changes: tuple[ChangeEntry, ...] = ()
    if operation != "read":
        guarded = await _guard_write(ctx, tool, arguments, name, operation, progress.approved)
        if isinstance(guarded, StepOutcome):
            return guarded
        changes = guarded
    call = ToolCall(id=tool_call_id(ctx.run_id, name), name=tool.name, arguments=arguments)
    journal = ctx.journal
    await journal.append(
        ToolCallStartedEvent(
            iteration_number=0,
            call_id=call.id,
            tool_name=tool.name,
            arguments=arguments,
        )
    )
    # the executor holds the tool's own timeout (its expiry is an error result, not a raise)
    outcome = await ctx.fx.call_tool(
        call, ctx.tool_executor.execute, idempotent=tool.idempotent, timeout=None
    )
    value = None if outcome.is_error else decode_result(outcome.content)
    error = outcome.content if outcome.is_error else None
    await journal.append(
        FunctionResultEvent(
            step=name,
            function=tool.name,
            arguments=arguments,
            result=value,
            success=not outcome.is_error,
            error=error,
        )
    )
    if error is not None:
        return StepOutcome.failed(error, changes=changes)
    return StepOutcome.completed(value, changes=changes)


async def _guard_write(
    ctx: StepContext,
    tool: Tool,
    arguments: dict[str, Any],
    name: str,
    operation: str,
    approved: bool,
) -> StepOutcome | tuple[ChangeEntry, ...]:
    """The safety authority's part: a gate unless one was just approved, then a backup."""
    settings = ctx.plan.settings
    if not approved and settings.auto_gate:
        message = (
            f"Step {name!r} will {operation} using {tool.name} "
            f"{json.dumps(arguments, ensure_ascii=False, default=str)}. Go ahead?"
        )
        verdict = await ask_gate(ctx, name, message, settings.gate_timeout_s)
        if not verdict.approved:
            return StepOutcome.gate_refused(verdict.outcome, verdict.decided_by, name)
    entries = await _back_up(ctx, tool, arguments, name)
    if isinstance(entries, str):
        return StepOutcome.failed(f"backup before {tool.name} failed: {entries}")
    for entry in entries:
        await ctx.journal.append(
            ChangeRecordedEvent(
                step=name,
                action=entry.action,
                resource_type=entry.resource_type,
                resource_id=entry.resource_id,
                backup_path=entry.backup_path,
            )
        )
    if not entries:
        await ctx.journal.append(
            WarningEvent(
                message=f"step {name!r}: {tool.name} may {operation} but nothing was backed up "
                "(no path argument, no snapshot hook); it cannot be rolled back",
            )
        )
    return entries


async def _back_up(
    ctx: StepContext, tool: Tool, arguments: dict[str, Any], name: str
) -> tuple[ChangeEntry, ...] | str:
    """The backup is an effect: taken once, served from the log on resume (never re-taken
    after the tool has changed what it saved). An error comes back as its message."""
    call = ToolCall(backup_call_id(ctx.run_id, name), "backup", {"tool": tool.name})
    invoke = BackupInvocation(ctx, tool.name, arguments, name)
    result = await ctx.fx.call_tool(call, invoke, idempotent=True, timeout=None)
    if result.is_error:
        return result.content
    return tuple(ChangeEntry.from_dict(data) for data in json.loads(result.content))


# --- gate steps ----------------------------------------------------------------------------


async def run_gate_step(
    ctx: StepContext, step: StepDefinition, name: str, progress: TaskProgress
) -> StepOutcome:
    template = step.message_template or step.description
    task_name = ctx.plan.task.name
    message = render_template(template, progress.scope) if template else ""
    message = message or f"Continue with task {task_name!r}?"
    verdict = await ask_gate(ctx, name, message, step.timeout_s or ctx.plan.settings.gate_timeout_s)
    if not verdict.approved:
        return StepOutcome.gate_refused(verdict.outcome, verdict.decided_by, name)
    result = {"approved": True, "decided_by": verdict.decided_by}
    return StepOutcome.completed(result, approved_gate=True)


async def ask_gate(ctx: StepContext, name: str, message: str, timeout: float) -> GateVerdict:
    """`confirmation_required`, the gate effect (a decided gate is not asked again on
    resume; a waiting one waits again), then `gate_decision` (a warning if nobody decided
    in time: the step's `step_complete` says `timed_out`)."""
    request = GateRequest(
        ctx.fx.log.gate_id(gate_request_id(ctx.run_id, name)), name, message, timeout
    )
    journal = ctx.journal
    # the gate is asked first (the gatekeeper opens it before its first await), so a
    # decision made as soon as `confirmation_required` arrives always finds it waiting
    asked = asyncio.ensure_future(ctx.fx.gate(request))
    try:
        await asyncio.sleep(0)  # lets `asked` run up to its wait
        await journal.append(
            ConfirmationRequiredEvent(
                step=name,
                request_id=request.request_id,
                message=message,
                timeout_s=timeout,
            )
        )
    except BaseException:
        asked.cancel()
        raise
    verdict = await asked
    if verdict.outcome == "timed_out":
        await journal.append(
            WarningEvent(message=f"gate {name!r}: no decision within {timeout:g}s")
        )
        return verdict
    await journal.append(
        GateDecisionEvent(
            step=name,
            request_id=request.request_id,
            approved=verdict.approved,
            decided_by=verdict.decided_by,
            reason=verdict.reason,
        )
    )
    return verdict


# --- agent steps ---------------------------------------------------------------------------


async def run_agent_step(
    ctx: StepContext, step: StepDefinition, name: str, progress: TaskProgress
) -> StepOutcome:
    """Run an AgentExecutor (read-only tools), streaming its text; retry once, simpler."""
    if ctx.plan.model is None:
        return StepOutcome.failed("an agent step needs a model (pass --model)")
    instructions = render_template(step.description or step.message_template or "", progress.scope)
    prompts = [
        agent_prompt(ctx, instructions, progress),
        SIMPLE_PROMPT.format(instructions=instructions, request=progress.request),
    ]
    why = ""
    for attempt, prompt in enumerate(prompts, start=1):
        outcome = await _agent_attempt(ctx, prompt, name, attempt, step.output_schema)
        if outcome.ok and step.output_schema is not None:  # the validated value, as JSON
            return StepOutcome.completed(json.loads(outcome.answer or "null"))
        if outcome.ok:
            return StepOutcome.completed(outcome.answer)
        why = outcome.why
        if attempt == 1:
            await ctx.journal.append(
                WarningEvent(
                    message=f"agent step {name!r} failed ({why}); "
                    "retrying once with a simpler prompt"
                )
            )
    return StepOutcome.failed(f"agent step failed twice: {why}")


def agent_prompt(ctx: StepContext, instructions: str, progress: TaskProgress) -> str:
    done = {k: v for k, v in progress.results.items() if v is not None}
    context = json.dumps({"inputs": progress.inputs, "results": done}, default=str, indent=1)
    return (
        f"You are one step of the task {ctx.plan.task.name!r}.\n\n{instructions}\n\n"
        f"The user's request: {progress.request or '(none)'}\n\nWhat is known so far:\n{context}"
    )


async def _agent_attempt(
    ctx: StepContext, prompt: str, name: str, attempt: int, schema: dict[str, Any] | None = None
) -> AgentAttempt:
    """One agent run as an effect: its tools only read, so an interrupted one runs again;
    a finished one is served from the log (its text re-made as `stream` events)."""
    call = ToolCall(f"{tool_call_id(ctx.run_id, name)}:agent{attempt}", "agent", {"try": attempt})
    journal = ctx.journal
    await journal.append(
        ToolCallStartedEvent(
            iteration_number=0,
            call_id=call.id,
            tool_name="agent",
            arguments=call.arguments,
            child_run_id=child_run_id(ctx.run_id, call.id),  # its run, nested under the call
        )
    )
    invoke = AgentInvocation(ctx, prompt, name, attempt, schema)
    result = await ctx.fx.call_tool(call, invoke, idempotent=True, timeout=None)
    outcome = AgentAttempt.from_json(result.content)
    if not invoke.streamed:  # served from the log, or run elsewhere: its text is re-made
        for chunk in outcome.chunks:
            await journal.append(StreamEvent(step=name, chunk=chunk))
    await journal.append(
        ToolCallEvent(
            iteration_number=0,
            call_id=call.id,
            tool_name=call.name,
            arguments=call.arguments,
            args_summary=summarize(json.dumps(call.arguments, default=str), 160),
            duration_ms=round(result.duration_ms, 3),
            result=result.content,
            result_summary=summarize(outcome.answer or outcome.why, 160),
            is_error=not outcome.ok,
        )
    )
    return outcome


HANDLERS: dict[str, StepHandler] = {
    "tool": run_tool_step,
    "agent": run_agent_step,
    "gate": run_gate_step,
}
