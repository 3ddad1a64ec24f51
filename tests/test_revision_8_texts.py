"""Revision 8: a call to a shortened dotted name that names one tool's part (`uber` for
`uber.ride`) is a call of that tool, approvals and all; a name two tools share a part of
is not guessed; the prompted format says what to do when no tool fits (an answer of a
sentence or two, no call). Revision 7 keeps its reading, so its runs replay as they ran."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.testing import ScriptedModel
from loopwright.tools import Tool
from recording_tools import CALLED
from recording_tools import a_tool as recording_tool


def a_tool(name: str) -> Tool:
    return recording_tool(name, {"to": {"type": "string"}})


@pytest.fixture(autouse=True)
def _clean() -> None:
    CALLED.clear()


def call(tool_name: str, /, **args: Any) -> str:
    return json.dumps({"thought": f"use {tool_name}", "action": tool_name, "action_input": args})


def final(text: str) -> str:
    return json.dumps({"thought": "done", "final_answer": text})


TOOLS = ["uber.ride", "taxi.price", "weather.get", "news.get"]


@pytest.mark.parametrize(("written", "meant"), [("uber", "uber.ride"), ("ride", "uber.ride")])
async def test_revision_8_calls_the_one_tool_a_shortened_dotted_name_names(
    written: str, meant: str
) -> None:
    model = ScriptedModel([call(written, to="airport"), final("booked")])
    agent = AgentExecutor(model, [a_tool(n) for n in TOOLS])
    result = await agent.run("Get me a ride to the airport")
    assert result.status == "completed"
    assert [(meant, {"to": "airport"})] == CALLED
    assert [s.tool_name for s in result.steps] == [meant]
    assert len(model.requests) == 2  # no refusal round


async def test_a_name_two_tools_share_a_part_of_is_not_guessed() -> None:
    model = ScriptedModel([call("get", to="Oslo"), final("I cannot tell which.")])
    result = await AgentExecutor(model, [a_tool(n) for n in TOOLS]).run("Oslo?")
    assert CALLED == [] and result.answer == "I cannot tell which."
    assert "There is no tool named 'get'." in str(model.requests[1].messages[-1].content)


async def test_revision_7_refuses_the_shortened_name_and_names_the_tool() -> None:
    model = ScriptedModel([call("uber", to="airport"), final("booked")])
    options = AgentOptions(revision=7)
    result = await AgentExecutor(model, [a_tool(n) for n in TOOLS], options=options).run("ride")
    assert result.status == "completed" and CALLED == []
    assert "Did you mean 'uber.ride'?" in str(model.requests[1].messages[-1].content)


async def test_the_tool_a_shortened_name_names_still_waits_for_approval() -> None:
    model = ScriptedModel([call("uber", to="airport")])
    agent = AgentExecutor(
        model, [a_tool(n) for n in TOOLS], approve=["uber.ride"], on_pending="wait"
    )
    result = await agent.run("Get me a ride to the airport")
    assert result.status == "waiting" and CALLED == []
    assert [p.tool_name for p in result.pending_approvals] == ["uber.ride"]


async def test_revision_8_asks_for_a_short_answer_when_no_tool_fits() -> None:
    model = ScriptedModel([final("No listed tool gives the area of a triangle.")])
    result = await AgentExecutor(model, [a_tool(n) for n in TOOLS]).run("A triangle's area?")
    assert (result.status, result.steps, CALLED) == ("completed", (), [])
    system = str(model.requests[0].messages[0].content)
    assert (
        "If no listed tool does what the task asks, do not call one: reply with final_answer "
        "in one or two sentences." in system
    )
    old = ScriptedModel([final("none")])
    await AgentExecutor(old, [a_tool("uber.ride")], options=AgentOptions(revision=7)).run("?")
    assert "If no listed tool does what" not in str(old.requests[0].messages[0].content)
