"""Seed 001's `ReActJsonParser` is strict (issue 34, item 6): broken JSON and plain text are
parse errors that get one corrective retry, never the final answer.

Seed 001's lines held here:

- "Implement `ReActJsonParser` (or RegexParser) as default."
- "**Unit**: `tests/core/engine/test_parser.py`: Feed sample LLM outputs (valid/invalid
  JSON, text) and verify correct `AgentAction` parsing."
"""

from __future__ import annotations

import json

import pytest

from loopwright.compat import AgentExecutor, ParseError, ReActJsonParser
from loopwright.errors import RunError
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

BROKEN = "{'action': 'echo', 'action_input': {'text': 'y'},}"
CUT_OFF = '{"thought": "echo it", "action": "echo", "action_input": {"text": "y"'
PLAIN = "The answer is 42."


@tool
def echo(text: str) -> str:
    """Repeat the given text back."""
    return text


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer, "is_final": True})


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (BROKEN, "not valid JSON"),
        (CUT_OFF, "not valid JSON"),
        (PLAIN, "no JSON object, only text"),
        ('{"thought": "hm", "result": 4}', 'no "action" and no "final_answer"'),
        ('Action: echo\nAction Input: {"text": oops}', "Action Input is not valid JSON"),
    ],
)
def test_invalid_json_and_text_are_parse_errors_that_say_what_is_wrong(
    text: str, problem: str
) -> None:
    """Seed 001: "Feed sample LLM outputs (valid/invalid JSON, text)": invalid JSON and
    text raise ParseError, whose message names the problem and the expected format."""
    with pytest.raises(ParseError, match=problem) as raised:
        ReActJsonParser().parse(text)
    assert '"action_input"' in str(raised.value)


@pytest.mark.parametrize("bad", [BROKEN, PLAIN])
async def test_a_bad_reply_gets_one_corrective_retry_not_a_final_answer(bad: str) -> None:
    """Seed 001's `ReActJsonParser` in its executor: the bad reply is not returned as the
    answer; the model is told what was wrong and asked again, and its answer comes back."""
    model = ScriptedModel([bad, final("y")])
    agent = AgentExecutor(model, [echo], parser=ReActJsonParser())
    assert await agent.run("echo y") == "y"
    assert len(model.requests) == 2
    correction = model.requests[1].messages[-1].content
    assert correction != bad and '"final_answer"' in correction


async def test_a_second_bad_reply_ends_the_run_with_an_error() -> None:
    model = ScriptedModel([PLAIN, BROKEN])
    agent = AgentExecutor(model, [echo], parser=ReActJsonParser())
    with pytest.raises(RunError, match="could not be read after 2 attempts"):
        await agent.run("echo y")
    assert len(model.requests) == 2


async def test_the_default_chain_keeps_prose_as_the_answer() -> None:
    """Without the seed's parser the executor uses the native chain, which takes plain text
    for the final answer (docs/parsing.md says so)."""
    model = ScriptedModel([PLAIN])
    assert await AgentExecutor(model, [echo]).run("what is 6 * 7?") == PLAIN
