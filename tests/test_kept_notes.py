"""Revision 5: each request's note (the iteration, and in prompted mode the task and the
latest results) stays in the conversation, so every request starts with the whole request
before it and the reply to it: a prompt cache (llama.cpp's, a server's) evaluates only
the new turn. Revision 4 took the note out again, so the next request differed from the
point where the note had been."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.messages import ModelRequest
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


def call(tool_name: str, /, **args: Any) -> str:
    return json.dumps({"thought": f"use {tool_name}", "action": tool_name, "action_input": args})


CHAIN = [call("add", a=1, b=2), call("add", a=3, b=4), json.dumps({"final_answer": "7"})]


def texts(request: ModelRequest) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in request.messages]


async def requests_of(revision: int, *, tool_mode: str = "prompted") -> list[ModelRequest]:
    model = ScriptedModel(CHAIN)
    options = AgentOptions(revision=revision, tool_mode=tool_mode)  # type: ignore[arg-type]
    result = await AgentExecutor(model, [add], options=options).run("Add 1 and 2, then 3 and 4")
    assert result.status == "completed" and result.answer == "7"
    assert len(model.requests) == 3
    return model.requests


@pytest.mark.parametrize("tool_mode", ["prompted", "native"])
async def test_each_request_starts_with_the_one_before_and_its_reply(tool_mode: str) -> None:
    requests = await requests_of(5, tool_mode=tool_mode)
    for before, after in itertools.pairwise(requests):
        sent = texts(before)
        assert texts(after)[: len(sent)] == sent  # the note sent is still there, unmoved
        reply = after.messages[len(sent)]
        assert reply.role == "assistant"
    for request in requests:  # and each request's newest message carries its own note
        iteration = requests.index(request) + 1
        assert request.messages[-1].content.endswith(
            "every part of the task." if tool_mode == "prompted" and iteration > 1 else "]"
        )
        assert f"[Iteration {iteration} of at most" in request.messages[-1].content


async def test_revision_4_takes_the_note_out_so_the_next_request_differs_inside() -> None:
    requests = await requests_of(4)
    sent = texts(requests[0])
    again = texts(requests[1])[: len(sent)]
    assert again != sent
    assert again[-1] == ("user", "Add 1 and 2, then 3 and 4")  # the first note is gone
    assert "[Iteration 1 of at most" in sent[-1][1]
