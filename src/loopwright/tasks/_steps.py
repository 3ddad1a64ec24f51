"""The step dispatcher's three handlers: tool, agent and gate steps (and the gate wait).

Each handler is an async generator of the run's events and ends with `step_complete`.
A failure sets `run.abort`; the run then stops before the next step.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from loopwright.agent import AgentExecutor, ExecutionResult
from loopwright.errors import LoopwrightError
from loopwright.events import (
    ChangeRecorded,
    ConfirmationRequired,
    Event,
    FunctionResult,
    GateDecided,
    ModelResponded,
    StreamChunk,
    ToolCallFinished,
    Warning,
)
from loopwright.messages import ToolCall
from loopwright.safety.operations import before_operation, classify_operation
from loopwright.tasks._models import StepDefinition
from loopwright.tools import Tool, ToolRegistry

if TYPE_CHECKING:
    from loopwright.tasks._run import TaskRun

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


async def run_tool_step(run: TaskRun, step: StepDefinition, name: str) -> AsyncIterator[Event]:
    assert step.tool is not None
    tool = run.registry.get(step.tool)
    try:
        arguments = run.arguments(step)
    except LoopwrightError as exc:
        yield await run.fail_step(name, str(exc))
        return
    operation = classify_operation(tool, arguments)
    if operation != "read":
        async for event in _guard_write(run, tool, arguments, name, operation):
            yield event
        if run.abort is not None:
            return
    call = ToolCall(id=f"{run.run_id}:{name}", name=tool.name, arguments=arguments)
    outcome = await run.tool_executor.execute(call)
    value = None if outcome.is_error else decode_result(outcome.content)
    error = outcome.content if outcome.is_error else None
    yield await run.emit(
        FunctionResult,
        step=name,
        function=tool.name,
        arguments=arguments,
        result=value,
        success=not outcome.is_error,
        error=error,
    )
    if error is not None:
        yield await run.fail_step(name, error)
        return
    yield await run.complete_step(step, name, value)


async def _guard_write(
    run: TaskRun, tool: Tool, arguments: dict[str, Any], name: str, operation: str
) -> AsyncIterator[Event]:
    """The safety authority's part: a gate if none just approved, then a backup."""
    if not run.just_approved and run.settings.auto_gate:
        message = (
            f"Step {name!r} will {operation} using {tool.name} "
            f"{json.dumps(arguments, ensure_ascii=False, default=str)}. Go ahead?"
        )
        async for event in await_gate(run, name, message, run.settings.gate_timeout_s):
            yield event
        if run.gate_outcome != "approved":
            yield await run.stop_at_gate(name)
            return
    try:
        entries = before_operation(
            tool, arguments, run.safety, step=name, now=run.emitter.clock.time()
        )
    except LoopwrightError as exc:
        yield await run.fail_step(name, f"backup before {tool.name} failed: {exc}")
        return
    for entry in entries:
        yield await run.emit(
            ChangeRecorded,
            step=name,
            action=entry.action,
            resource_type=entry.resource_type,
            resource_id=entry.resource_id,
            backup_path=entry.backup_path,
        )
    if not entries:
        yield await run.emit(
            Warning,
            message=f"step {name!r}: {tool.name} may {operation} but nothing was backed up "
            "(no path argument, no snapshot hook); it cannot be rolled back",
        )


async def run_agent_step(run: TaskRun, step: StepDefinition, name: str) -> AsyncIterator[Event]:
    """Run the AgentExecutor, streaming its text; retry once with a simpler prompt."""
    if run.model is None:
        yield await run.fail_step(name, "an agent step needs a model (pass --model)")
        return
    instructions = run.render(step.description or step.message_template or "")
    prompts = [
        run.agent_prompt(instructions),
        SIMPLE_PROMPT.format(instructions=instructions, request=run.request),
    ]
    why = ""
    for attempt, prompt in enumerate(prompts, start=1):
        tools = _read_only(run.registry) if attempt == 1 else ToolRegistry()
        agent = AgentExecutor(
            run.model, tools, options=run.settings.agent_options, workspace=run.settings.workspace
        )
        result: ExecutionResult | None = None
        async for item in _stream_agent(run, agent, prompt, name, attempt):
            if isinstance(item, ExecutionResult):
                result = item
            elif isinstance(item, str):
                why = item
            else:
                yield item
        if result is not None and result.success:
            yield await run.complete_step(step, name, result.answer)
            return
        if result is not None:
            why = result.message or result.reason or result.status
        if attempt == 1:
            yield await run.emit(
                Warning,
                message=f"agent step {name!r} failed ({why}); retrying once with a simpler prompt",
            )
    yield await run.fail_step(name, f"agent step failed twice: {why}")


def _read_only(registry: ToolRegistry) -> ToolRegistry:
    return ToolRegistry(t for t in registry if t.effect == "read")


async def _stream_agent(
    run: TaskRun, agent: AgentExecutor, prompt: str, name: str, attempt: int
) -> AsyncIterator[Event | ExecutionResult | str]:
    """The agent's text as `stream` events, then its result (or why it raised, as text)."""
    chunks: asyncio.Queue[str | None] = asyncio.Queue()

    async def forward(event: Event) -> None:
        if run.settings.forward_agent_events:
            await run.emitter.sink(event)
        if isinstance(event, ModelResponded):
            for text in (event.thought, event.final_answer):
                if text:
                    chunks.put_nowait(text)
        elif isinstance(event, ToolCallFinished):
            chunks.put_nowait(f"[{event.tool_name}] {event.result_summary}")

    job = asyncio.create_task(
        agent.run(
            prompt,
            run_id=f"{run.run_id}.{name}.{attempt}",
            tenant=run.client_name,
            parent_run_id=run.run_id,
            on_event=forward,
        )
    )
    job.add_done_callback(lambda _: chunks.put_nowait(None))
    try:
        while (chunk := await chunks.get()) is not None:
            yield await run.emit(StreamChunk, step=name, chunk=chunk)
    finally:
        if not job.done():
            job.cancel()
            await asyncio.gather(job, return_exceptions=True)
    problem = job.exception()
    if problem is None:
        yield job.result()
    elif isinstance(problem, LoopwrightError):
        yield f"{type(problem).__name__}: {problem}"
    else:
        raise problem


async def run_gate_step(run: TaskRun, step: StepDefinition, name: str) -> AsyncIterator[Event]:
    template = step.message_template or step.description
    message = run.render(template) if template else f"Continue with task {run.task.name!r}?"
    timeout = step.timeout_s or run.settings.gate_timeout_s
    async for event in await_gate(run, name, message, timeout):
        yield event
    if run.gate_outcome != "approved":
        yield await run.stop_at_gate(name)
        return
    yield await run.complete_step(step, name, {"approved": True, "decided_by": run.decided_by})
    run.just_approved = True


async def await_gate(run: TaskRun, name: str, message: str, timeout: float) -> AsyncIterator[Event]:
    """Emit `confirmation_required`, wait for GateBroker.decide (or time out)."""
    gate = run.gates.open(run.run_id, name, message, timeout)
    try:
        yield await run.emit(
            ConfirmationRequired,
            step=name,
            request_id=gate.request_id,
            message=message,
            timeout_s=timeout,
        )
        try:
            await asyncio.wait_for(gate.event.wait(), timeout)
        except TimeoutError:
            if not gate.decided:
                gate.approved, gate.decided_by = False, "timeout"
                run.gate_outcome = "timed_out"
                yield await run.emit(
                    Warning, message=f"gate {name!r}: no decision within {timeout:g}s"
                )
                return
        run.gate_outcome = "approved" if gate.approved else "rejected"
        run.decided_by = gate.decided_by
        yield await run.emit(
            GateDecided,
            step=name,
            request_id=gate.request_id,
            approved=bool(gate.approved),
            decided_by=gate.decided_by,
        )
    finally:
        run.gates.close(gate.request_id)
