"""Issue 21's parser gaps: native tool-call arguments cut off mid-object are repaired like
truncated JSON in text, and an empty code fence is a parse error with a correction."""

from __future__ import annotations

import json

import pytest

from loopwright.agent import AgentExecutor
from loopwright.events import Event, ParseErrorEvent
from loopwright.messages import ModelResponse
from loopwright.parsing import ParsedFinal, ParseFailure, parse_reply
from loopwright.parsing.messages import response_from_message
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool(effect="read")
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": 2, "b": 3', {"a": 2, "b": 3}),
        ('{"a": 2, "b": 3,', {"a": 2, "b": 3}),
        ('{"path": "notes.txt", "text": "hel', {"path": "notes.txt", "text": "hel"}),
        ("{'a': 2, 'b': 3}", {"a": 2, "b": 3}),
    ],
)
def test_cut_off_native_arguments_are_repaired(raw: str, expected: dict[str, object]) -> None:
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "function": {"name": "add", "arguments": raw}}],
    }
    read = response_from_message(message)
    assert isinstance(read, ModelResponse)
    assert [(c.id, c.name, c.arguments) for c in read.tool_calls] == [("c1", "add", expected)]


@pytest.mark.parametrize("raw", ["[1, 2", "not json", "42"])
def test_arguments_that_are_no_object_are_still_refused(raw: str) -> None:
    message = {"tool_calls": [{"function": {"name": "add", "arguments": raw}}]}
    assert (
        response_from_message(message)
        == "tool call 0 has no name or its arguments are not a JSON object"
    )


@pytest.mark.parametrize(
    "text",
    [
        "```json\n```",
        "```\n\n```",
        "Here is the JSON:\n```json\n   \n```",
        "<think>hm</think>```json```",
    ],
)
def test_an_empty_code_fence_is_a_parse_error(text: str) -> None:
    outcome = parse_reply(ModelResponse(text=text))
    assert isinstance(outcome, ParseFailure)
    assert "empty code block" in outcome.message and "final_answer" in outcome.message


def test_an_empty_fence_inside_an_answer_is_still_the_answer() -> None:
    text = "Wrap code in ```python\n``` fences, and put the code between them."
    assert parse_reply(ModelResponse(text=text)) == ParsedFinal(text)


async def test_a_run_corrects_an_empty_fence_and_goes_on() -> None:
    model = ScriptedModel(["```json\n```", json.dumps({"thought": "oops", "final_answer": "42"})])
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await AgentExecutor(model, [add]).run("answer", on_event=sink)
    assert (result.status, result.answer) == ("completed", "42")
    failures = [e for e in events if isinstance(e, ParseErrorEvent)]
    assert len(failures) == 1 and failures[0].will_retry
    correction = model.requests[1].messages[-1].content
    assert correction.startswith(
        "Your last reply could not be read: the reply held an empty code block"
    )
