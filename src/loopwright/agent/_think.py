"""The model-call phase of an iteration: build the request, call the model through
`Effects`, read the reply (once more with a correction when it can't be read), and keep
it in the conversation."""

from __future__ import annotations

from loopwright.agent._conversation import estimate_tokens
from loopwright.agent._replies import acted_on_text, response_event
from loopwright.agent._reply_grammar import final_reply_schema
from loopwright.agent._setup import RunSetup
from loopwright.agent._state import LoopState, effect_timeout, extra_call_stop
from loopwright.effects import Effects
from loopwright.events import ParseErrorEvent
from loopwright.guards import Stop
from loopwright.messages import Message, ModelRequest, ModelResponse, ToolCall
from loopwright.parsing import ParsedAction, ParsedFinal, ParseFailure
from loopwright.parsing._result import ParseOutcome
from loopwright.parsing._several import consecutive_calls
from loopwright.prompts._turn_notes import correction_message
from loopwright.prompts.errors import dotted_part_match, placeholder_match


async def think(
    setup: RunSetup, fx: Effects, state: LoopState, *, last_turn: bool = False
) -> ParseOutcome | Stop:
    """Call the model (and once more with a correction if its reply can't be read)."""
    attempts = setup.options.parse_retries + 1
    problem = "no reply"
    for attempt in range(1, attempts + 1):
        listening = fx.log.listening
        request = model_request(setup, state, fingerprint=listening, last_turn=last_turn)
        started = fx.monotonic() if listening else 0.0  # the effects' clock (a workflow's)
        timeout = effect_timeout(setup, state.guard, setup.options.iteration_timeout_s)
        response = await fx.call_model(setup.model, request, timeout)
        if state.memory is not None:
            state.memory.replies.append((state.guard.iteration, response))
        outcome = received(setup, state, response)
        if listening:  # its fields are built only for someone reading
            duration_ms = (fx.monotonic() - started) * 1000
            iteration = state.guard.iteration
            event = response_event(iteration, state.digest, response, outcome, duration_ms)
            await fx.log.append(event)
        if not isinstance(outcome, ParseFailure):
            return outcome
        stop = None  # a correction is a model call too: the limit, budget and clock apply
        if attempt < attempts:
            stop = extra_call_stop(setup, state, fx.monotonic())
        will_retry = attempt < attempts and stop is None
        problem = outcome.message
        await fx.log.append(
            ParseErrorEvent(
                iteration_number=state.guard.iteration,
                message=outcome.message,
                raw=response.text,
                will_retry=will_retry,
            )
        )
        if stop is not None:
            return stop
        if will_retry:
            native = setup.tool_mode == "native" and setup.revision.native_correction
            correction = correction_message(outcome.message, native=native)
            state.conversation.append(Message.user(correction))
    return Stop(
        "parse_error",
        f"Stopped: the model's reply could not be read after {attempts} attempts ({problem}).",
    )


def model_request(
    setup: RunSetup, state: LoopState, *, fingerprint: bool, last_turn: bool = False
) -> ModelRequest:
    """The next request (fitted to the context window); its fingerprint goes in `state`.
    A last turn offers no tool: none natively, and a constraining backend is held to a
    final answer in prompted mode. The note (`LoopState.note`) ends the newest message only;
    since revision 5 it stays there, so each request starts with the one before."""
    note = state.note(setup, last_turn=last_turn)
    window = setup.options.context_window
    if window:
        state.conversation.fit(window - estimate_tokens(note))
    if fingerprint:
        state.digest = state.conversation.digest(note, setup.native_tool_names)
    if setup.revision.notes_stay:  # the note stays where it is sent
        state.conversation.keep_note(note)
        note = ""
    schema = setup.output_schema
    if last_turn and setup.output is None:
        prompted = setup.tool_mode == "prompted"
        schema = final_reply_schema(is_final=setup.revision.is_final) if prompted else None
    return ModelRequest(
        messages=state.conversation.request_messages(note),
        tools=() if last_turn else setup.native_tool_specs,
        temperature=setup.options.temperature,
        max_output_tokens=setup.options.max_output_tokens,
        output_schema=schema,
        stop_at_action=setup.stop_at_action,
        calls_in_a_row=setup.several_calls,
    )


def received(setup: RunSetup, state: LoopState, response: ModelResponse) -> ParseOutcome:
    """Account for the reply, read it, and keep it in the conversation."""
    setup.ledger.record(setup.model.name, response.usage)
    guard = state.guard
    guard.largest_output_tokens = max(guard.largest_output_tokens, response.usage.output_tokens)
    state.model_calls += 1
    guard.model_calls = state.model_calls
    outcome = setup.parse(response)
    if isinstance(outcome, ParsedAction) and outcome.calls is not response.tool_calls:
        outcome = read_on(setup, response.text, outcome)
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


def read_on(setup: RunSetup, text: str, action: ParsedAction) -> ParsedAction:
    """The calls a prompted reply makes, as the run reads them: all the JSON calls written
    one after the other when it offers several a reply, and (revision 8 on) a shortened
    dotted name that names one tool's part (`uber` for `uber.ride`) read as that tool's
    (revision 9 on: the format's placeholder `tool` as the one tool the thought names)."""
    calls = action.calls
    if setup.several_calls and len(calls) == 1:
        written = consecutive_calls(text)  # (a fenced block of two objects reads as its last)
        if any((w.name, w.arguments) == (calls[0].name, calls[0].arguments) for w in written):
            calls = written
    if setup.revision.resolves_short_names and any(c.name not in setup.tools for c in calls):
        names = setup.tools.names()  # (only for a call that names no tool)
        calls = tuple(
            ToolCall(c.id, meant, c.arguments)
            if c.name not in setup.tools and (meant := _meant(setup, c.name, action, names))
            else c
            for c in calls
        )
    return action if calls == action.calls else ParsedAction(calls, action.thought)


def _meant(setup: RunSetup, name: str, action: ParsedAction, names: list[str]) -> str | None:
    """The tool a call to `name`, no tool's name, means: the one whose dotted name has it as
    a part (revision 8 on), or for the format's placeholder (`tool`) in a reply of one call,
    the one tool the reply's thought names (revision 9 on)."""
    meant = dotted_part_match(name, names)
    if meant is None and setup.revision.reads_placeholder_names and len(action.calls) == 1:
        meant = placeholder_match(name, action.thought, names)
    return meant
