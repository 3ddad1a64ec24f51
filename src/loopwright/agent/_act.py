"""The tool phase of an iteration: run the reply's tool calls through `Effects` (asking
for approval where the run says so), keep the observations, then ask the policies."""

from __future__ import annotations

from loopwright.agent._approval import ask_approval, refusal_text
from loopwright.agent._pending import pending_approval
from loopwright.agent._replies import finished_event
from loopwright.agent._result import CompletedStep
from loopwright.agent._setup import RunSetup
from loopwright.agent._state import LoopState, effect_timeout, first_stop
from loopwright.agent._subagent import subagent_run_id
from loopwright.effects import Effects
from loopwright.errors import RunSuspended
from loopwright.events import ToolCallStartedEvent
from loopwright.guards import Nudge, Stop
from loopwright.guards._policy import CallSignature
from loopwright.messages import Message, ToolCall, ToolResult
from loopwright.parsing import ParsedAction
from loopwright.prompts._turn_notes import observation_text, recap_line, tool_summary

TOO_MANY_CALLS = (
    "Not run: a reply may make at most {limit} tool calls; this one made {count}. "
    "Call the remaining tools in your next reply if they are still needed."
)

AFTER_FAILED_CALL = (
    "Not run: the call to {name} before it in this reply failed, and this call was written "
    "without its result. Call it again in your next reply if it is still needed."
)
"""A prompted batch stops at a failed call: the calls after it may have counted on it."""


async def act(
    setup: RunSetup, fx: Effects, state: LoopState, action: ParsedAction
) -> Stop | Nudge | None:
    """Run the reply's tool calls (up to the per-reply cap), then ask the policies."""
    native = bool(action.calls) and state.conversation.messages[-1].tool_calls is action.calls
    limit = setup.options.calls_per_reply
    new_information = False
    observations: list[str] = []
    failed: str | None = None  # a prompted batch's failed call: the rest are not run
    for index, call in enumerate(action.calls):
        if failed is not None:
            result = ToolResult(call.id, call.name, AFTER_FAILED_CALL.format(name=failed), True)
        elif index < limit:
            result = await run_tool(setup, fx, state, call)
            if result.is_error and setup.several_calls:
                failed = call.name
        else:
            text = TOO_MANY_CALLS.format(limit=limit, count=len(action.calls))
            result = ToolResult(call.id, call.name, text, True)
        new_information |= result.content not in state.seen_observations
        state.seen_observations.add(result.content)
        if native:
            message = Message.tool(result.content, call.id, call.name)
            state.conversation.append(message, observation=True)
        else:
            observations.append(prompted_observation(setup, call.name, result.content))
    state.refresh(setup, fx.monotonic(), new_observation=new_information)
    verdict = first_stop(setup.after_tool_calls, state.guard)
    if isinstance(verdict, Nudge):
        observations.append(verdict.message)
    if observations:
        text = "\n\n".join(observations)
        state.conversation.append(Message.user(text), observation=not native)
    return verdict


async def run_tool(setup: RunSetup, fx: Effects, state: LoopState, call: ToolCall) -> ToolResult:
    iteration = state.guard.iteration
    tool = setup.tools.find(call.name)  # None: the executor answers with the tools there are
    approval = setup.context.approval
    effect = "" if tool is None else tool.effect
    if approval is not None and approval.needs(call, effect):
        waits_s = setup.context.approval_timeout_s or setup.options.approval_timeout_s
        try:  # a sub-agent's call waits as long as its lead's
            verdict = await ask_approval(fx, call, waits_s)
        except RunSuspended as stop:  # nobody has decided: the run ends waiting here
            pending = pending_approval(setup, call, effect, stop.gate_id)
            raise RunSuspended(stop.gate_id, (pending,)) from None
        if state.memory is not None:
            state.memory.verdicts[call.id] = (iteration, verdict)
        if not verdict.approved:  # not run: the refusal is the model's observation
            text = refusal_text(call, verdict)
            if setup.tool_mode == "prompted":
                state.recap.append(recap_line(call.name, call.arguments, text, True))
            return ToolResult(call.id, call.name, text, True)
    if fx.log.listening:
        await fx.log.append(
            ToolCallStartedEvent(
                iteration_number=iteration,
                call_id=call.id,
                tool_name=call.name,
                arguments=call.arguments,
                child_run_id=subagent_run_id(setup.tools, setup.run_id, call.id, call.name),
            )
        )
    signature = CallSignature(call.name, call.arguments)
    state.guard.call_signatures.append(signature)
    state.guard.unknown_tool_calls.append(tool is None)
    timeout = effect_timeout(setup, state.guard, None)
    if timeout is not None and timeout > setup.tool_executor.timeout_for(tool):
        timeout = None  # the tool's own limit ends it first (an observation, not a stop)
    # safe to run again after a crash? unknown tools and undeclared ones: no
    idempotent = tool is not None and tool.idempotent
    result = await fx.call_tool(
        call, setup.tool_executor.execute, idempotent=idempotent, timeout=timeout
    )
    state.steps.append(
        CompletedStep(iteration, call.name, call.arguments, result.content, result.is_error)
    )
    if state.memory is not None:
        state.memory.results[call.id] = (iteration, result)
    if setup.tool_mode == "prompted":  # only prompted mode's progress note reads it
        state.recap.append(recap_line(call.name, call.arguments, result.content, result.is_error))
    if fx.log.listening:
        await fx.log.append(finished_event(iteration, call, signature.arguments_json(), result))
    return result


def prompted_observation(setup: RunSetup, tool_name: str, content: str) -> str:
    """A result as prompted mode sends it; since revision 5 with what its tool returns."""
    summary = ""
    if setup.revision.texts.observations_say_what and tool_name in setup.tools:
        summary = tool_summary(setup.tools.get(tool_name).description)
    if summary.lower() == tool_name.lower():  # a tool without a description has its name
        summary = ""
    return observation_text(tool_name, content, summary)
