"""Revision 9: a reply whose action is the format's placeholder (`tool`, `tool_name`) and
whose thought names exactly one tool is a call of that tool, approvals and all (BFCL's
simple_python_30: the 1.5B model wrote the right tool in its thought and `"action":
"tool"`). A thought naming no tool, or two, is not guessed from; revision 8 keeps its
reading, so its runs replay as they ran."""

from __future__ import annotations

import json

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.testing import ScriptedModel
from loopwright.tools import Tool
from recording_tools import CALLED
from recording_tools import a_tool as recording_tool

TOOLS = ["kinematics.final_velocity", "kinematics.acceleration", "add"]


def a_tool(name: str) -> Tool:
    return recording_tool(name, {"x": {"type": "number"}})


@pytest.fixture(autouse=True)
def _clean() -> None:
    CALLED.clear()


def placeholder_call(thought: str, name: str = "tool") -> str:
    return json.dumps({"thought": thought, "action": name, "action_input": {"x": 4}})


def final(text: str) -> str:
    return json.dumps({"thought": "done", "final_answer": text})


@pytest.mark.parametrize("name", ["tool", "tool_name", "Tool"])
async def test_revision_9_calls_the_one_tool_the_thought_names(name: str) -> None:
    thought = "Get the final velocity with the kinematics.final_velocity function."
    model = ScriptedModel([placeholder_call(thought, name), final("120 m/s")])
    result = await AgentExecutor(model, [a_tool(n) for n in TOOLS]).run("final velocity?")
    assert result.status == "completed"
    assert CALLED == [("kinematics.final_velocity", {"x": 4})]
    assert len(model.requests) == 2  # no refusal round


@pytest.mark.parametrize(
    "thought",
    [
        "Compute it with a kinematics formula.",  # no tool named (`kinematics` is a part)
        "kinematics.final_velocity or kinematics.acceleration will do.",  # two tools
        "Use the adder.",  # `add` only inside a word
    ],
)
async def test_a_thought_that_names_no_one_tool_is_not_guessed_from(thought: str) -> None:
    model = ScriptedModel([placeholder_call(thought), final("I cannot tell which.")])
    result = await AgentExecutor(model, [a_tool(n) for n in TOOLS]).run("velocity?")
    assert CALLED == [] and result.answer == "I cannot tell which."
    assert "There is no tool named 'tool'." in str(model.requests[1].messages[-1].content)


async def test_revision_8_refuses_the_placeholder_as_it_did() -> None:
    thought = "Use the kinematics.final_velocity function."
    model = ScriptedModel([placeholder_call(thought), final("120 m/s")])
    options = AgentOptions(revision=8)
    result = await AgentExecutor(model, [a_tool(n) for n in TOOLS], options=options).run("v?")
    assert result.status == "completed" and CALLED == []
    assert "There is no tool named 'tool'." in str(model.requests[1].messages[-1].content)


async def test_the_tool_the_thought_names_still_waits_for_approval() -> None:
    model = ScriptedModel([placeholder_call("Call add now.")])
    agent = AgentExecutor(model, [a_tool(n) for n in TOOLS], approve=["add"], on_pending="wait")
    result = await agent.run("add it")
    assert result.status == "waiting" and CALLED == []
    assert [p.tool_name for p in result.pending_approvals] == ["add"]
