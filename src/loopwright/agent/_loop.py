"""The ReAct loop: small functions that advance a LoopState through the run's Effects.

    run_agent: run_started, then iterations until a final answer or a stop, run_finished
    _iteration: policies, iteration_started, think, act
    _think:    the model call (and one corrective retry when its reply can't be read)
    _act:      each tool call of the reply, then the policies' verdict on the round

Every effect (model call, tool call, verification) goes through `Effects`, and every
event through its EventLog. The loop holds no state of its own and never knows whether
it is running live or replaying a recorded run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time

from loopwright.agent._approval import ask_approval, refusal_text
from loopwright.agent._conversation import estimate_tokens
from loopwright.agent._replies import acted_on_text, finished_fields, response_fields
from loopwright.agent._reply_grammar import final_reply_schema
from loopwright.agent._result import CompletedStep, ExecutionResult
from loopwright.agent._setup import RunSetup
from loopwright.agent._state import LoopState, effect_timeout, first_stop, timed_out
from loopwright.agent._subagent import CURRENT_CALL, subagent_run_id
from loopwright.effects import Effects, VerificationResult
from loopwright.errors import (
    BudgetExceeded,
    LoopwrightError,
    ModelError,
    ReplayDivergence,
    ScriptExhaustedError,
)
from loopwright.events import (
    IterationStartedEvent,
    ModelResponseEvent,
    OutputInvalidEvent,
    ParseErrorEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    RunStoppedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
    VerificationEvent,
    WarningEvent,
)
from loopwright.guards import CallSignature, GuardState, Nudge, Stop
from loopwright.messages import Message, ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.parsing import ParsedAction, ParsedFinal, ParseFailure, ParseOutcome
from loopwright.prompts import (
    correction_message,
    iteration_note,
    observation_text,
    progress_note,
    recap_line,
)

LAST_TURN_AFTER = ("repetition", "no_progress")
"""The stops after which `AgentOptions.last_turn` asks the model for its final answer."""
LAST_TURN = (
    "{why} Do not call a tool again: the results above are all you will get. Using them, "
    "reply now {how}."
)
TOO_MANY_CALLS = (
    "Not run: a reply may make at most {limit} tool calls; this one made {count}. "
    "Call the remaining tools in your next reply if they are still needed."
)


async def run_agent(setup: RunSetup, fx: Effects) -> ExecutionResult:
    """Run the request to its end; the result is also in the log's `run_finished`."""
    log = fx.log
    if log.listening:  # its fields cost ~5 µs to build: only for someone reading
        await log.append(
            RunStartedEvent,
            kind="agent",
            request=setup.request,
            model=setup.model.name,
            tools=setup.tools.names(),
            options=setup.options.to_dict(),
            tenant=setup.tenant,
            parent_run_id=setup.parent_run_id,
            spec=setup.spec,
            parent_call_id=setup.parent_call_id,
        )
        await log.flush()  # the run exists in the store before its first effect
    state = LoopState.start(setup, fx.monotonic(), fingerprinted=log.listening)
    state.conversation.append(Message.user(setup.request))
    try:
        result = await _loop(setup, fx, state)
    except asyncio.CancelledError:
        await _finish(setup, fx, state.result(setup, "cancelled", reason="cancelled"))
        raise
    except ReplayDivergence:
        raise
    except LoopwrightError as exc:
        await log.append(RunErrorEvent, error_type=type(exc).__name__, message=str(exc))
        result = state.result(setup, "failed", reason="error", message=str(exc))
    return await _finish(setup, fx, result)


async def _loop(setup: RunSetup, fx: Effects, state: LoopState) -> ExecutionResult:
    while True:
        outcome = await _iteration(setup, fx, state)
        if isinstance(outcome, ExecutionResult):
            return outcome
        if isinstance(outcome, Stop):
            if outcome.reason in LAST_TURN_AFTER and setup.options.last_turn:
                answered = await _last_turn(setup, fx, state, outcome)
                if answered is not None:
                    return answered
            await fx.log.append(RunStoppedEvent, reason=outcome.reason, message=outcome.message)
            return state.result(setup, "stopped", reason=outcome.reason, message=outcome.message)


async def _last_turn(
    setup: RunSetup, fx: Effects, state: LoopState, stop: Stop
) -> ExecutionResult | None:
    """After a loop of calls, one more model call for the final answer from the results
    already observed (no tool runs); None when the reply is not a final answer or the call
    fails (the stop stands: a model or script that cannot answer loses the run nothing)."""
    prompted = setup.tool_mode == "prompted"
    why = stop.message.removeprefix("Stopped: ")
    await fx.log.append(WarningEvent, message=f"{stop.message}; asking for the final answer")
    state.conversation.append(Message.user(LAST_TURN.format(
        why=why[:1].upper() + why[1:],
        how="with final_answer" if prompted else "as plain text, without calling a tool",
    )))  # fmt: skip
    await _next_iteration(fx, state.guard)
    try:
        outcome = await _think(setup, fx, state, last_turn=True)
    except (TimeoutError, ModelError, ScriptExhaustedError, BudgetExceeded):
        return None
    return await _final(setup, fx, state, outcome) if isinstance(outcome, ParsedFinal) else None


async def _next_iteration(fx: Effects, guard: GuardState) -> None:
    """Count the next iteration; `iteration_started` for whoever reads the log."""
    guard.iteration += 1
    if fx.log.listening:
        await fx.log.append(
            IterationStartedEvent,
            iteration_number=guard.iteration,
            max_iterations=guard.max_iterations,
        )


async def _iteration(
    setup: RunSetup, fx: Effects, state: LoopState
) -> ExecutionResult | Stop | None:
    """One round: the policies, the model's turn, the tools' turn."""
    state.refresh(setup, fx.monotonic())
    stop = first_stop(setup.before_model_call, state.guard)
    if isinstance(stop, Stop):
        return stop
    guard = state.guard
    await _next_iteration(fx, guard)
    try:
        outcome = await _think(setup, fx, state)
    except TimeoutError:
        return timed_out(setup, fx.monotonic() - guard.started_at)
    while isinstance(outcome, ParsedFinal):  # an answer that does not validate goes back
        done = await _final(setup, fx, state, outcome)
        if done is not None:
            return done
        try:
            outcome = await _think(setup, fx, state)
        except TimeoutError:
            return timed_out(setup, fx.monotonic() - guard.started_at)
    if isinstance(outcome, Stop):
        return outcome
    if isinstance(outcome, ParseFailure):  # only when parse_retries < 0
        return state.result(setup, "failed", reason="parse_error", message=outcome.message)
    try:
        verdict = await _act(setup, fx, state, outcome)
    except TimeoutError:
        return timed_out(setup, fx.monotonic() - guard.started_at)
    return verdict if isinstance(verdict, Stop) else None


async def _final(
    setup: RunSetup, fx: Effects, state: LoopState, final: ParsedFinal
) -> ExecutionResult | None:
    """The run's result for a final answer; None when an invalid one went back to the model."""
    spec = setup.output
    if spec is None:
        return state.result(setup, "completed", answer=final.answer)
    checked = spec.check(final.answer)
    if checked.valid:
        answer = json.dumps(checked.json_value, ensure_ascii=False)
        result = state.result(setup, "completed", answer=answer)
        return dataclasses.replace(result, output=checked.value)
    state.output_attempts += 1
    retry = state.output_attempts <= setup.options.output_retries
    await fx.log.append(
        OutputInvalidEvent,
        iteration_number=state.guard.iteration,
        answer=final.answer,
        errors=list(checked.errors),
        will_retry=retry,
    )
    if retry:
        state.conversation.append(Message.user(spec.feedback(checked.errors)))
        return None
    message = (
        f"the final answer did not match the output type {spec.name} after "
        f"{state.output_attempts} attempt(s): {'; '.join(checked.errors)}"
    )
    await fx.log.append(RunErrorEvent, error_type="OutputValidationError", message=message)
    result = state.result(
        setup, "failed", reason="output_invalid", message=message, answer=final.answer
    )
    return dataclasses.replace(result, output_errors=checked.errors)


async def _think(
    setup: RunSetup, fx: Effects, state: LoopState, *, last_turn: bool = False
) -> ParseOutcome | Stop:
    """Call the model (and once more with a correction if its reply can't be read)."""
    attempts = setup.options.parse_retries + 1
    problem = "no reply"
    for attempt in range(1, attempts + 1):
        if attempt > 1:  # a correction is a model call too: budget and clock apply
            state.refresh(setup, fx.monotonic())
            stop = first_stop(setup.before_model_call, state.guard)
            if isinstance(stop, Stop) and stop.reason != "max_iterations":
                return stop
        listening = fx.log.listening
        request = _model_request(setup, state, fingerprint=listening, last_turn=last_turn)
        started = time.perf_counter() if listening else 0.0
        timeout = effect_timeout(setup, state.guard, setup.options.iteration_timeout_s)
        response = await fx.call_model(setup.model, request, timeout)
        outcome = _received(setup, state, response)
        if listening:  # its fields cost ~2 µs to build: only for someone reading
            duration_ms = (time.perf_counter() - started) * 1000
            fields = response_fields(state.guard.iteration, state.digest, response, outcome)
            await fx.log.append(ModelResponseEvent, duration_ms=round(duration_ms, 3), **fields)
        if not isinstance(outcome, ParseFailure):
            return outcome
        will_retry = attempt < attempts
        problem = outcome.message
        await fx.log.append(
            ParseErrorEvent,
            iteration_number=state.guard.iteration,
            message=outcome.message,
            raw=response.text,
            will_retry=will_retry,
        )
        if will_retry:
            state.conversation.append(Message.user(correction_message(outcome.message)))
    return Stop(
        "parse_error",
        f"Stopped: the model's reply could not be read after {attempts} attempts ({problem}).",
    )


def _model_request(
    setup: RunSetup, state: LoopState, *, fingerprint: bool, last_turn: bool = False
) -> ModelRequest:
    """The next request (fitted to the context window); its fingerprint goes in `state`.
    A last turn offers no tool: none natively, and a constraining backend is held to a
    final answer in prompted mode."""
    guard = state.guard
    if setup.tool_mode == "prompted":  # small models need the task and latest results restated
        note = progress_note(guard.iteration, guard.max_iterations, setup.request, state.recap)
    else:
        note = iteration_note(guard.iteration, guard.max_iterations)
    window = setup.options.context_window
    if window:
        state.conversation.fit(window - estimate_tokens(note))
    if fingerprint:
        state.digest = state.conversation.digest(note, setup.native_tool_names)
    schema = setup.output_schema
    if last_turn and setup.output is None:
        schema = final_reply_schema() if setup.tool_mode == "prompted" else None
    return ModelRequest(
        messages=state.conversation.request_messages(note),
        tools=() if last_turn else setup.native_tool_specs,
        temperature=setup.options.temperature,
        max_output_tokens=setup.options.max_output_tokens,
        output_schema=schema,
    )


def _received(setup: RunSetup, state: LoopState, response: ModelResponse) -> ParseOutcome:
    """Account for the reply, read it, and keep it in the conversation."""
    setup.ledger.record(setup.model.name, response.usage)
    guard = state.guard
    guard.largest_output_tokens = max(guard.largest_output_tokens, response.usage.output_tokens)
    state.model_calls += 1
    outcome = setup.parse(response)
    if setup.output is not None and not setup.tools and isinstance(outcome, ParsedAction):
        answer = setup.output.final_in(response.text)  # no tools: any action is invented
        if answer is not None:
            outcome = ParsedFinal(answer, outcome.thought)
    if (
        isinstance(outcome, ParsedAction)
        and outcome.calls is not response.tool_calls  # native calls: the reply's own tuple
        and outcome.calls != response.tool_calls
    ):
        # calls read from text get ids derived from the run, so a resumed run makes the same
        calls = tuple(
            ToolCall(f"call_{state.model_calls}_{index}", call.name, call.arguments)
            for index, call in enumerate(outcome.calls)
        )
        outcome = ParsedAction(calls, outcome.thought)
    calls = outcome.calls if isinstance(outcome, ParsedAction) else ()
    native = bool(calls) and calls is response.tool_calls
    text = response.text
    prompted = setup.tool_mode == "prompted"
    if prompted and isinstance(outcome, ParsedAction) and not native and len(calls) == 1:
        text = acted_on_text(outcome.thought, calls[0])
    state.conversation.append(Message.assistant(text, calls if native else ()))
    if not isinstance(outcome, ParseFailure) and outcome.thought:
        state.last_thought = outcome.thought
    return outcome


async def _act(
    setup: RunSetup, fx: Effects, state: LoopState, action: ParsedAction
) -> Stop | Nudge | None:
    """Run the reply's tool calls (up to the per-reply cap), then ask the policies."""
    native = bool(action.calls) and state.conversation.messages[-1].tool_calls is action.calls
    limit = setup.options.max_calls_per_reply
    new_information = False
    observations: list[str] = []
    for index, call in enumerate(action.calls):
        if index < limit:
            result = await _run_tool(setup, fx, state, call)
        else:
            text = TOO_MANY_CALLS.format(limit=limit, count=len(action.calls))
            result = ToolResult(call.id, call.name, text, True)
        new_information |= result.content not in state.seen_observations
        state.seen_observations.add(result.content)
        if native:
            message = Message.tool(result.content, call.id, call.name)
            state.conversation.append(message, observation=True)
        else:
            observations.append(observation_text(call.name, result.content))
    state.refresh(setup, fx.monotonic(), new_observation=new_information)
    verdict = first_stop(setup.after_tool_calls, state.guard)
    if isinstance(verdict, Nudge):
        observations.append(verdict.message)
    if observations:
        text = "\n\n".join(observations)
        state.conversation.append(Message.user(text), observation=not native)
    return verdict


async def _run_tool(setup: RunSetup, fx: Effects, state: LoopState, call: ToolCall) -> ToolResult:
    iteration = state.guard.iteration
    if setup.approval is not None and setup.approval.needs(call, setup.tools):
        verdict = await ask_approval(fx, call, setup.options.approval_timeout_s)
        if not verdict.approved:  # not run: the refusal is the model's observation
            text = refusal_text(call, verdict)
            if setup.tool_mode == "prompted":
                state.recap.append(recap_line(call.name, call.arguments, text, True))
            return ToolResult(call.id, call.name, text, True)
    if fx.log.listening:
        await fx.log.append(
            ToolCallStartedEvent,
            iteration_number=iteration,
            call_id=call.id,
            tool_name=call.name,
            arguments=call.arguments,
            child_run_id=subagent_run_id(setup.tools, setup.run_id, call.id, call.name),
        )
    signature = CallSignature(call.name, call.arguments)
    state.guard.call_signatures.append(signature)
    if setup.starts_subagents:
        CURRENT_CALL.set(call.id)  # a sub-agent tool's run id derives from it
    timeout = effect_timeout(setup, state.guard, None)
    if timeout is not None and timeout > setup.tool_executor.timeout_for(call.name):
        timeout = None  # the tool's own limit ends it first (an observation, not a stop)
    result = await fx.call_tool(
        call,
        setup.tool_executor.execute,
        idempotent=setup.is_idempotent(call.name),
        timeout=timeout,
    )
    state.steps.append(
        CompletedStep(iteration, call.name, call.arguments, result.content, result.is_error)
    )
    if setup.tool_mode == "prompted":  # only prompted mode's progress note reads it
        state.recap.append(recap_line(call.name, call.arguments, result.content, result.is_error))
    if fx.log.listening:
        fields = finished_fields(iteration, call, signature.arguments_json(), result)
        await fx.log.append(ToolCallEvent, **fields)
    return result


async def _finish(setup: RunSetup, fx: Effects, result: ExecutionResult) -> ExecutionResult:
    """Verify the work (if asked), then `run_finished` with the answer or the partial work."""
    if setup.verifier is not None:
        verification = await _verify(setup, fx)
        result = dataclasses.replace(result, verification=verification)
    if setup.scrubber is not None and result.answer:  # the caller gets what the log shows
        answer = setup.scrubber.scrub(result.answer).text
        if answer != result.answer:
            result = dataclasses.replace(result, answer=answer)
    if not fx.log.listening:
        return result
    await fx.log.append(
        RunFinishedEvent,
        status=result.status,
        answer=result.answer,
        reason=result.reason,
        usage=result.usage.to_dict(),
        cost=result.cost,
        steps=len(result.steps),
        partial=None if result.success else result.partial(),
    )
    return result


async def _verify(setup: RunSetup, fx: Effects) -> VerificationResult:
    verifier = setup.verifier
    assert verifier is not None
    workspace = setup.tool_executor.context.workspace

    async def check() -> VerificationResult:
        return await verifier(workspace)

    verification = await fx.verify(check)
    await fx.log.append(
        VerificationEvent,
        outcome=verification.outcome,
        passed=list(verification.passed),
        failed=list(verification.failed),
        output=verification.output,
    )
    return verification
