"""The ReAct loop: small functions that advance a LoopState through the run's Effects.

    run_agent:  run_started, then iterations until a final answer or a stop, run_finished
    _iteration: policies, iteration_started, think, act
    think:      the model call (and one corrective retry when its reply can't be read),
                in _think.py
    act:        each tool call of the reply, then the policies' verdict on the round,
                in _act.py
    _last_turn: after a repetition or no-progress stop, one more call for the answer,
                if the iteration limit leaves one
    _limit_turn: the last call the limit allows is offered with no tool (the limit is hard:
                no run makes more model calls than it)

Every effect (model call, tool call, verification) goes through `Effects`, and every
event through its EventLog. The loop holds no state of its own and never knows whether
it is running live or replaying a recorded run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

from loopwright.agent._act import act
from loopwright.agent._result import ExecutionResult, PendingApproval
from loopwright.agent._setup import RunSetup
from loopwright.agent._state import LoopState, extra_call_stop, first_stop, timed_out
from loopwright.agent._think import think
from loopwright.effects import Effects, VerificationResult
from loopwright.errors import (
    LoopwrightError,
    ModelAdapterError,
    ModelError,
    ReplayDivergence,
    RunSuspended,
    ScriptExhaustedError,
    is_interrupt,
)
from loopwright.events import (
    IterationStartedEvent,
    OutputInvalidEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    RunStoppedEvent,
    VerificationEvent,
    WarningEvent,
)
from loopwright.guards import GuardState, Stop
from loopwright.guards._policies import limit_stop
from loopwright.messages import Message
from loopwright.parsing import ParsedFinal, ParseFailure
from loopwright.parsing._result import ParseOutcome

LAST_TURN_AFTER = ("repetition", "no_progress")
"""The stops after which `AgentOptions.last_turn` asks the model for its final answer."""
ASKING = "asking the model for a final answer (the run stops if none comes)"
"""The warning before a last turn: what happens next, not a stop (the run may complete)."""
LAST_TURN = (
    "{why} Do not call a tool again: the results above are all you will get. Using them, "
    "reply now {how}."
)


async def run_agent(
    setup: RunSetup, fx: Effects, *, state: LoopState | None = None
) -> ExecutionResult:
    """Run the request to its end; the result is also in the log's `run_finished`.
    `state`: a new LoopState of the run's to advance (one is made when not given), whose
    transcript the caller reads afterwards (a turn's, made again from its log)."""
    log = fx.log
    if log.listening:  # its fields are built only for someone reading
        lineage = setup.lineage
        await log.append(
            RunStartedEvent(
                kind="agent",
                request=setup.request,
                model=setup.model.name,
                tools=setup.tools.names(),
                options=setup.options.to_dict(),
                tenant=setup.tenant,
                parent_run_id=setup.parent_run_id,
                spec=setup.spec,
                parent_call_id=setup.parent_call_id,
                after_run_id=lineage.after_run_id,
                fork_of=lineage.fork_of.to_dict() if lineage.fork_of is not None else None,
            )
        )
        await log.flush()  # the run exists in the store before its first effect
    if state is None:
        state = LoopState.start(setup, fx.monotonic(), fingerprinted=log.listening)
    state.conversation.append(Message.user(setup.request))
    try:
        result = await _loop(setup, fx, state)
    except asyncio.CancelledError as exc:
        if not is_interrupt(exc):  # interrupted: it has not ended (resumable)
            await _finish(setup, fx, state.result(setup, "cancelled", reason="cancelled"))
        raise
    except RunSuspended as stop:
        if setup.parent_call_id is not None:
            raise  # a sub-agent's run: its lead stops at the same gate, through the call
        return await _waiting(setup, fx, state, stop)
    except ReplayDivergence:
        raise
    except LoopwrightError as exc:  # a model's own exception too (ModelAdapterError)
        error_type = exc.error_type if isinstance(exc, ModelAdapterError) else type(exc).__name__
        await log.append(RunErrorEvent(error_type=error_type, message=str(exc)))
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
            await fx.log.append(RunStoppedEvent(reason=outcome.reason, message=outcome.message))
            return state.result(setup, "stopped", reason=outcome.reason, message=outcome.message)


async def _last_turn(
    setup: RunSetup, fx: Effects, state: LoopState, stop: Stop
) -> ExecutionResult | None:
    """After a loop of calls, one more model call for the final answer from the results
    already observed (no tool runs), if the iteration limit leaves one; None when the reply
    is not a final answer or the call fails or a before-call policy forbids it (the stop
    stands: the run loses nothing)."""
    if extra_call_stop(setup, state, fx.monotonic()) is not None:
        return None  # the limit, the budget, the clock or a policy of yours forbids it
    why = stop.message.removeprefix("Stopped: ")
    await fx.log.append(WarningEvent(message=f"{why[:1].upper()}{why[1:].rstrip('.')}: {ASKING}"))
    try:
        outcome = await _answer_turn(setup, fx, state, why[:1].upper() + why[1:])
    except (TimeoutError, ModelError, ScriptExhaustedError):
        return None
    return await _final(setup, fx, state, outcome) if isinstance(outcome, ParsedFinal) else None


async def _limit_turn(setup: RunSetup, fx: Effects, state: LoopState) -> ExecutionResult | Stop:
    """The last iteration the limit allows, offered with no tool: a tool called now could
    never be read by the model. A final answer ends the run; anything else is the limit."""
    guard = state.guard
    why = f"This is the last model call the iteration limit ({guard.max_iterations}) allows."
    await fx.log.append(WarningEvent(message=f"{why[:-1]}: {ASKING}"))
    try:
        outcome = await _answer_turn(setup, fx, state, why)
    except TimeoutError:
        return timed_out(setup, fx.monotonic() - guard.started_at)
    if isinstance(outcome, ParsedFinal):
        done = await _final(setup, fx, state, outcome)
        if done is not None:
            return done
    return outcome if isinstance(outcome, Stop) else limit_stop(guard)


async def _answer_turn(
    setup: RunSetup, fx: Effects, state: LoopState, why: str
) -> ParseOutcome | Stop:
    """One iteration that asks for the final answer and offers no tool."""
    prompted = setup.tool_mode == "prompted"
    state.conversation.append(Message.user(LAST_TURN.format(
        why=why,
        how="with final_answer" if prompted else "as plain text, without calling a tool",
    )))  # fmt: skip
    state.guard.iteration += 1
    if fx.log.listening:
        await fx.log.append(_iteration_started(state.guard))
    return await think(setup, fx, state, last_turn=True)


def _is_last_call(setup: RunSetup, guard: GuardState) -> bool:
    """Is the next model call the last the limit allows, in a run with tools and the last
    turn on? Then it is offered without tools (the limit stays hard)."""
    last = guard.hard_limit and guard.model_calls + 1 >= guard.max_iterations
    return last and setup.options.last_turn and bool(setup.tools.names())


def _iteration_started(guard: GuardState) -> IterationStartedEvent:
    """The event of the iteration `guard` has just counted (for whoever reads the log)."""
    return IterationStartedEvent(
        iteration_number=guard.iteration, max_iterations=guard.max_iterations
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
    if _is_last_call(setup, guard):
        return await _limit_turn(setup, fx, state)
    guard.iteration += 1
    if fx.log.listening:
        await fx.log.append(_iteration_started(guard))
    try:
        outcome = await think(setup, fx, state)
    except TimeoutError:
        return timed_out(setup, fx.monotonic() - guard.started_at)
    while isinstance(outcome, ParsedFinal):  # an answer that does not validate goes back
        done = await _final(setup, fx, state, outcome)
        if done is not None:
            return done
        try:
            outcome = await think(setup, fx, state)
        except TimeoutError:
            return timed_out(setup, fx.monotonic() - guard.started_at)
    if isinstance(outcome, Stop):
        return outcome
    if isinstance(outcome, ParseFailure):  # only when parse_retries < 0
        return state.result(setup, "failed", reason="parse_error", message=outcome.message)
    round_start = len(state.steps)
    try:
        verdict = await act(setup, fx, state, outcome)
    except TimeoutError:
        return timed_out(setup, fx.monotonic() - guard.started_at)
    answer = _tool_answer(setup, state, round_start)
    if answer is not None:
        done = await _final(setup, fx, state, ParsedFinal(answer))
        if done is not None:
            return done
    return verdict if isinstance(verdict, Stop) else None


def _tool_answer(setup: RunSetup, state: LoopState, round_start: int) -> str | None:
    """The run's answer from this round's successful calls of `answer_tools` (None: none)."""
    wanted = setup.options.answer_tools
    if not wanted:
        return None
    results = [
        s.result for s in state.steps[round_start:] if s.tool_name in wanted and not s.is_error
    ]
    return "\n".join(results) if results else None


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
    guard = state.guard  # a retry is a model call: only inside the limit
    retry = state.output_attempts <= setup.options.output_retries
    retry = retry and (not guard.hard_limit or guard.model_calls < guard.max_iterations)
    await fx.log.append(
        OutputInvalidEvent(
            iteration_number=state.guard.iteration,
            answer=final.answer,
            errors=list(checked.errors),
            will_retry=retry,
        )
    )
    if retry:
        state.conversation.append(Message.user(spec.feedback(checked.errors)))
        return None
    message = (
        f"the final answer did not match the output type {spec.name} after "
        f"{state.output_attempts} attempt(s): {'; '.join(checked.errors)}"
    )
    await fx.log.append(RunErrorEvent(error_type="OutputValidationError", message=message))
    result = state.result(
        setup, "failed", reason="output_invalid", message=message, answer=final.answer
    )
    return dataclasses.replace(result, output_errors=checked.errors)


async def _waiting(
    setup: RunSetup, fx: Effects, state: LoopState, stop: RunSuspended
) -> ExecutionResult:
    """A run stopped at a tool call nobody has decided: no `run_finished` (it is not over),
    its events durable, a `waiting` result naming the calls."""
    await fx.log.flush()
    pending: tuple[PendingApproval, ...] = stop.pending
    calls = ", ".join(f"{p.tool_name} (gate {p.gate_id})" for p in pending) or stop.gate_id
    result = state.result(
        setup, "waiting", reason="approval", message=f"waiting for a decision on {calls}"
    )
    return dataclasses.replace(result, pending_approvals=pending)


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
    status = result.status
    assert status != "waiting"  # a waiting run is not finished (_waiting)
    await fx.log.append(
        RunFinishedEvent(
            status=status,
            answer=result.answer,
            reason=result.reason,
            usage=result.usage.to_dict(),
            cost=result.cost,
            steps=len(result.steps),
            partial=None if result.success else result.partial(),
        )
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
        VerificationEvent(
            outcome=verification.outcome,
            passed=list(verification.passed),
            failed=list(verification.failed),
            output=verification.output,
        )
    )
    return verification
