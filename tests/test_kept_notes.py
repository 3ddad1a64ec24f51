"""Since prompt revision 3, a prompted run keeps each request's note (the iteration, the task
and the results so far) in the conversation: every request starts with the whole previous
request, so a model's cached prefix reaches the end of its previous reply. Revision 2 took
the note out again (its runs replay so), and native mode keeps its one-line note transient."""

from __future__ import annotations

import itertools
import json

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.messages import Message
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool(effect="read")
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def script() -> list[str]:
    call = {"thought": "t", "action": "add", "action_input": {"a": 1, "b": 2}}
    again = {"thought": "t", "action": "add", "action_input": {"a": 3, "b": 4}}
    return [json.dumps(call), json.dumps(again), json.dumps({"final_answer": "7"})]


async def requests_of(revision: int) -> list[tuple[Message, ...]]:
    model = ScriptedModel(script(), tool_mode="prompted")
    options = AgentOptions(revision=revision)
    result = await AgentExecutor(model, [add], options=options).run("add things")
    assert result.answer == "7"
    return [tuple(request.messages) for request in model.requests]


async def test_each_request_starts_with_the_whole_previous_one() -> None:
    requests = await requests_of(3)
    assert len(requests) == 3
    for before, after in itertools.pairwise(requests):
        assert after[: len(before)] == before
        assert after[len(before)].role == "assistant"  # then the reply it got
    assert "[Iteration 1 of at most" in requests[2][1].content  # the first note is still there
    assert requests[2][-1].content.count("Tool results so far:") == 1  # one note a message


async def test_revision_2_takes_the_note_out_again() -> None:
    requests = await requests_of(2)
    first, second = requests[0], requests[1]
    assert second[1].content == "add things" != first[1].content
    assert first[1].content.startswith("add things\n\n[Iteration 1 of at most")


@pytest.mark.parametrize("revision", [2, 3])
async def test_native_mode_sends_its_note_with_the_newest_message_only(revision: int) -> None:
    model = ScriptedModel(
        [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, "3"],
        tool_mode="native",
    )
    await AgentExecutor(model, [add], options=AgentOptions(revision=revision)).run("add")
    second = tuple(model.requests[1].messages)
    assert second[1].content == "add"
    assert "[Iteration 2 of at most" in second[-1].content
