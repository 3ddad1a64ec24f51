"""One agent run: the ReAct loop as pure bookkeeping over model and tool effects."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable
from typing import Any

from loopwright.agent._bookkeeping import RunBookkeeping
from loopwright.agent._conversation import estimate_tokens
from loopwright.agent._result import CompletedStep, ExecutionResult, VerificationResult
from loopwright.errors import LoopwrightError, ReplayDivergence
from loopwright.events import (
    IterationStarted,
    ModelResponded,
    ParseFailed,
    RunErrored,
    RunFinished,
    RunStarted,
    RunStopped,
    ToolCallFinished,
    ToolCallStarted,
    VerificationFinished,
)
from loopwright.guards import Nudge, Stop
from loopwright.messages import Message, ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.parsing import ParsedAction, ParsedFinal, ParseFailure, ParseOutcome
from loopwright.prompts import (
    correction_message,
    iteration_note,
    observation_text,
    progress_note,
    recap_line,
    summarize,
)
from loopwright.tools import run_with_timeout

SUMMARY_CHARS = 160


def _canonical_json() -> Callable[[Any], str]:
    """`json.dumps(value, sort_keys=True, default=str)`, for tool arguments (every call).

    `JSONEncoder.encode` makes a new C encoder on every call, about half its cost; this one
    is made once. Arguments are decoded JSON, so it skips the circular-reference check (a
    circular value would raise RecursionError instead of ValueError).
    """
    encoder = json.JSONEncoder(sort_keys=True, default=str)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator
        return encoder.encode
    encode = make(
        None, str, json.encoder.encode_basestring_ascii, None, ": ", ", ", True, False, True
    )

    def canonical(value: Any) -> str:
        return "".join(encode(value, 0))

    return canonical


canonical_json = _canonical_json()


def acted_on_text(thought: str | None, call: ToolCall) -> str:
    """The history keeps the one action that was taken, in the prompt's JSON format.

    Small models often write a whole imagined chain in one reply (action, invented
    observation, final answer...). Only the first action runs; keeping the rest in the
    history teaches the model its own invented ending, so it is left out (as ReAct runtimes
    cut a reply at a hallucinated `Observation:`).
    """
    action: dict[str, Any] = {"action": call.name, "action_input": call.arguments}
    if thought:
        action = {"thought": thought, **action}
    return json.dumps(action, ensure_ascii=False)


class AgentRun(RunBookkeeping):
    """Runs one request to the end. Every effect's result goes into an event."""

    async def execute(self) -> ExecutionResult:
        setup = self.setup
        if self.listening:
            await self.emit(
                RunStarted,
                request=setup.request,
                model=setup.model.name,
                tools=setup.tools.names(),
                options=setup.options.to_dict(),
                tenant=setup.tenant,
                parent_run_id=setup.parent_run_id,
            )
        self.conversation.append(Message.user(setup.request))
        try:
            result = await self._loop()
        except asyncio.CancelledError:
            await self._finish(self._result("cancelled", reason="cancelled"))
            raise
        except ReplayDivergence:
            raise
        except LoopwrightError as exc:
            await self.emit(RunErrored, error_type=type(exc).__name__, message=str(exc))
            result = self._result("failed", reason="error", message=str(exc))
        return await self._finish(result)

    async def _finish(self, result: ExecutionResult) -> ExecutionResult:
        verification = await self._verify()
        if verification is not None:
            result = _with_verification(result, verification)
        if self.listening:
            await self.emit(
                RunFinished,
                status=result.status,
                answer=result.answer,
                reason=result.reason,
                usage=result.usage.to_dict(),
                cost=result.cost,
                steps=len(result.steps),
                partial=None if result.success else result.partial(),
            )
        return result

    async def _loop(self) -> ExecutionResult:
        while True:
            self._refresh_state()
            stop = self._first_stop("before_model_call")
            if isinstance(stop, Stop):
                return await self._stopped(stop)
            state = self.state
            state.iteration += 1
            if self.listening and (pending := self.deliver(self._iteration_event())) is not None:
                await pending
            try:
                outcome = await self._think()
            except TimeoutError:
                outcome = self._timed_out()
            if isinstance(outcome, Stop):
                return await self._stopped(outcome)
            if isinstance(outcome, ParsedFinal):
                return self._result("completed", answer=outcome.answer)
            if isinstance(outcome, ParseFailure):  # only when parse_retries < 0
                return self._result("failed", reason="parse_error", message=outcome.message)
            try:
                nudge = await self._act(outcome)
            except TimeoutError:
                nudge = self._timed_out()
            if isinstance(nudge, Stop):
                return await self._stopped(nudge)

    async def _think(self) -> ParseOutcome | Stop:
        """Call the model (and once more with a correction if its reply can't be read)."""
        attempts = self.setup.options.parse_retries + 1
        problem = "no reply"
        for attempt in range(1, attempts + 1):
            if attempt > 1:  # a correction is a model call too: budget and clock apply
                self._refresh_state()
                stop = self._first_stop("before_model_call")
                if isinstance(stop, Stop) and stop.reason != "max_iterations":
                    return stop
            request = self._model_request()
            response = self.recorded.next_model_response() if self._replaying_until else None
            started = time.perf_counter()
            if response is None:  # awaited here, not in a helper: one coroutine less per step
                call = self.setup.model.complete(request)
                timeout = self._effect_timeout(self.setup.options.iteration_timeout_s)
                response = await (call if timeout is None else run_with_timeout(call, timeout))
            self._received(response, started)
            outcome = self._with_stable_ids(response, self.setup.parse(response))
            self._remember_reply(response, outcome)
            if self.listening:
                pending = self.deliver(self._response_event(response, outcome))
                if pending is not None:
                    await pending
            if not isinstance(outcome, ParseFailure):
                return outcome
            will_retry = attempt < attempts
            problem = outcome.message
            await self.emit(
                ParseFailed,
                iteration=self.state.iteration,
                message=outcome.message,
                raw=response.text,
                will_retry=will_retry,
            )
            if will_retry:
                self.conversation.append(Message.user(correction_message(outcome.message)))
        return Stop(
            "parse_error",
            f"Stopped: the model's reply could not be read after {attempts} attempts ({problem}).",
        )

    def _iteration_note(self) -> str:
        """Prompted mode restates the task and the latest results (small models need it)."""
        state = self.state
        if self.setup.tool_mode == "prompted":
            return progress_note(
                state.iteration, state.max_iterations, self.setup.request, self.recap
            )
        return iteration_note(state.iteration, state.max_iterations)

    def _model_request(self) -> ModelRequest:
        """The next request (fitted to the context window) and its fingerprint."""
        setup = self.setup
        note = self._iteration_note()
        window = setup.options.context_window
        self.conversation.fit(window - estimate_tokens(note) if window else None)
        if self.listening:
            self._digest = self.conversation.digest(note, self._tool_names)
        return ModelRequest(
            messages=self.conversation.request_messages(note),
            tools=self._tool_specs,
            temperature=setup.options.temperature,
            max_output_tokens=setup.options.max_output_tokens,
        )

    def _received(self, response: ModelResponse, started: float) -> None:
        self._model_ms = (time.perf_counter() - started) * 1000
        self.setup.ledger.record(self.setup.model.name, response.usage)
        self.state.largest_output_tokens = max(
            self.state.largest_output_tokens, response.usage.output_tokens
        )

    def _with_stable_ids(self, response: ModelResponse, outcome: ParseOutcome) -> ParseOutcome:
        """Calls read from text get ids derived from the run, so a resumed run makes the same."""
        self.model_calls += 1
        if not isinstance(outcome, ParsedAction) or outcome.calls == response.tool_calls:
            return outcome
        calls = tuple(
            dataclasses.replace(call, id=f"call_{self.model_calls}_{index}")
            for index, call in enumerate(outcome.calls)
        )
        return dataclasses.replace(outcome, calls=calls)

    def _remember_reply(self, response: ModelResponse, outcome: ParseOutcome) -> None:
        calls = outcome.calls if isinstance(outcome, ParsedAction) else ()
        native = bool(response.tool_calls) and calls == response.tool_calls
        text = response.text
        prompted = self.setup.tool_mode == "prompted"
        if prompted and isinstance(outcome, ParsedAction) and len(calls) == 1 and not native:
            text = acted_on_text(outcome.thought, calls[0])
        self.conversation.append(Message.assistant(text, calls if native else ()))
        if not isinstance(outcome, ParseFailure) and outcome.thought:
            self.last_thought = outcome.thought

    def _iteration_event(self) -> IterationStarted:
        return IterationStarted(
            run_id=self.run_id,
            seq=self.next_seq(),
            ts=self.timestamp(),
            iteration=self.state.iteration,
            max_iterations=self.state.max_iterations,
        )

    def _response_event(self, response: ModelResponse, outcome: ParseOutcome) -> ModelResponded:
        actions = []
        if isinstance(outcome, ParsedAction):
            actions = [
                {"tool": c.name, "arguments": c.arguments, "id": c.id} for c in outcome.calls
            ]
        return ModelResponded(
            run_id=self.run_id,
            seq=self.next_seq(),
            ts=self.timestamp(),
            iteration=self.state.iteration,
            response=response.to_dict(),
            request_digest=self._digest,
            thought=None if isinstance(outcome, ParseFailure) else outcome.thought,
            actions=actions,
            final_answer=outcome.answer if isinstance(outcome, ParsedFinal) else None,
            duration_ms=round(self._model_ms, 3),
        )

    async def _act(self, action: ParsedAction) -> Stop | None:
        native = bool(action.calls) and self.conversation.messages[-1].tool_calls == action.calls
        new_information = False
        observations: list[str] = []
        for call in action.calls:
            result = await self._run_tool(call)
            new_information |= result.content not in self.seen_observations
            self.seen_observations.add(result.content)
            self.state.call_signatures.append(self._signature)
            if native:
                self.conversation.append(
                    Message.tool(result.content, call.id, call.name), observation=True
                )
            else:
                observations.append(observation_text(call.name, result.content))
        self._refresh_state(new_observation=new_information)
        verdict = self._first_stop("after_tool_calls")
        if isinstance(verdict, Nudge):
            observations.append(verdict.message)
        if observations:
            text = "\n\n".join(observations)
            if native:
                self.conversation.append(Message.user(text))
            else:
                self.conversation.append(Message.user(text), observation=True)
        return verdict if isinstance(verdict, Stop) else None

    async def _run_tool(self, call: ToolCall) -> ToolResult:
        if self.listening and (pending := self.deliver(self._started_event(call))) is not None:
            await pending
        arguments_json = canonical_json(call.arguments)
        self._signature = f"{call.name}({arguments_json})"
        result = self._recorded_result(call) if self._replaying_until else None
        if result is None:
            execution = self.setup.tool_executor.execute(call)
            timeout = self._effect_timeout(None)
            result = await (execution if timeout is None else run_with_timeout(execution, timeout))
        iteration = self.state.iteration
        self.steps.append(
            CompletedStep(iteration, call.name, call.arguments, result.content, result.is_error)
        )
        if self.setup.tool_mode == "prompted":  # only prompted mode's progress note reads it
            self.recap.append(
                recap_line(call.name, call.arguments, result.content, result.is_error)
            )
        if self.listening:
            finished = self._finished_event(call, arguments_json, result)
            if (pending := self.deliver(finished)) is not None:
                await pending
        return result

    def _started_event(self, call: ToolCall) -> ToolCallStarted:
        return ToolCallStarted(
            run_id=self.run_id,
            seq=self.next_seq(),
            ts=self.timestamp(),
            iteration=self.state.iteration,
            call_id=call.id,
            tool_name=call.name,
            arguments=call.arguments,
        )

    def _finished_event(
        self, call: ToolCall, arguments_json: str, result: ToolResult
    ) -> ToolCallFinished:
        return ToolCallFinished(
            run_id=self.run_id,
            seq=self.next_seq(),
            ts=self.timestamp(),
            iteration_number=self.state.iteration,
            call_id=call.id,
            tool_name=call.name,
            arguments=call.arguments,
            args_summary=summarize(arguments_json, SUMMARY_CHARS),
            result=result.content,
            result_summary=summarize(result.content, SUMMARY_CHARS),
            is_error=result.is_error,
            duration_ms=round(result.duration_ms, 3),
            truncated=result.truncated,
            redactions=result.redactions,
        )

    def _recorded_result(self, call: ToolCall) -> ToolResult | None:
        """On resume: the recorded result, or an error when the call was cut off midway."""
        result = self.recorded.tool_results.get(call.id)
        if result is not None or not self.recorded.interrupted(call.id):
            return result
        if self.setup.is_idempotent(call.name):
            return None  # safe to run again
        return ToolResult(
            call.id,
            call.name,
            f"The call to '{call.name}' was interrupted before it finished (the process "
            "stopped). Its effect is unknown: check the current state before retrying.",
            is_error=True,
        )

    async def _stopped(self, stop: Stop) -> ExecutionResult:
        await self.emit(RunStopped, reason=stop.reason, message=stop.message)
        return self._result("stopped", reason=stop.reason, message=stop.message)

    async def _verify(self) -> VerificationResult | None:
        if self.setup.verifier is None:
            return None
        verification = await self.setup.verifier(self.setup.tool_executor.context.workspace)
        await self.emit(
            VerificationFinished,
            outcome=verification.outcome,
            passed=list(verification.passed),
            failed=list(verification.failed),
            output=self.setup.scrubber.scrub(verification.output).text,
        )
        return verification


def _with_verification(
    result: ExecutionResult, verification: VerificationResult
) -> ExecutionResult:
    return dataclasses.replace(result, verification=verification)
