"""What the loop writes about a reply and a tool call: the history's text of the action
taken, and the `model_response` and `tool_call` events."""

from __future__ import annotations

import json
from typing import Any

from loopwright.events import ModelResponseEvent, ToolCallEvent
from loopwright.events._types import reply_end
from loopwright.messages import ModelResponse, ToolCall, ToolResult
from loopwright.parsing import ParsedAction, ParsedFinal, ParseFailure
from loopwright.parsing._result import ParseOutcome
from loopwright.prompts._turn_notes import summarize

SUMMARY_CHARS = 160


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


def response_event(
    iteration: int,
    digest: str,
    response: ModelResponse,
    outcome: ParseOutcome,
    duration_ms: float,
) -> ModelResponseEvent:
    """A reply's `model_response` event."""
    actions = []
    if isinstance(outcome, ParsedAction):
        actions = [{"tool": c.name, "arguments": c.arguments, "id": c.id} for c in outcome.calls]
    return ModelResponseEvent(
        iteration_number=iteration,
        response=response.to_dict(),
        request_digest=digest,
        thought=None if isinstance(outcome, ParseFailure) else outcome.thought,
        actions=actions,
        final_answer=outcome.answer if isinstance(outcome, ParsedFinal) else None,
        duration_ms=round(duration_ms, 3),
        ended=reply_end(response.finish_reason),
    )


def finished_event(
    iteration: int, call: ToolCall, arguments_json: str, result: ToolResult
) -> ToolCallEvent:
    """A finished tool call's `tool_call` event."""
    return ToolCallEvent(
        iteration_number=iteration,
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
