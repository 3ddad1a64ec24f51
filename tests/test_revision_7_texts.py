"""Revision 7: a call to a tool that does not exist is told the closest tool's name (`uber`
for `uber.ride`), or else to answer in a sentence without a call; two calls made in turn
with results already seen stop as a repetition. Revision 6 keeps its texts and its guard,
so its runs replay as they ran."""

from __future__ import annotations

import json
from itertools import count
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.prompts._turn_notes import NO_TOOL_FITS_HINT, UNKNOWN_TOOL_HINT
from loopwright.prompts.errors import NO_TOOL_FITS, closest_tool
from loopwright.testing import ScriptedModel
from loopwright.tools import Tool, tool


def call(tool_name: str, /, **args: Any) -> str:
    return json.dumps({"thought": f"use {tool_name}", "action": tool_name, "action_input": args})


def final(text: str) -> str:
    return json.dumps({"thought": "done", "final_answer": text})


def ok_tool(name: str) -> Tool:
    def ok(**arguments: Any) -> str:
        return "ok"

    return Tool(
        name=name,
        description=f"{name} something",
        parameters={"type": "object", "properties": {"to": {"type": "string"}}},
        function=ok,
    )


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("uber", "uber.ride"),
        ("ride", "uber.ride"),
        ("get_weathr", "get_weather"),
        ("search", None),  # nothing close: no name offered
        ("", None),
    ],
)
def test_the_closest_tool_is_a_part_of_a_dotted_name_or_a_near_spelling(
    name: str, meant: str | None
) -> None:
    assert closest_tool(name, ["uber.ride", "get_weather", "add"]) == meant


async def second_request_text(revision: int, invented: str) -> str:
    model = ScriptedModel([call(invented, to="airport"), final("booked")])
    tools = [ok_tool("uber.ride"), ok_tool("taxi.price")]
    result = await AgentExecutor(model, tools, options=AgentOptions(revision=revision)).run(
        "Get me a ride to the airport"
    )
    assert result.status == "completed"
    return str(model.requests[1].messages[-1].content)


async def test_revision_7_names_the_tool_a_shortened_dotted_name_meant() -> None:
    sent = await second_request_text(7, "uber")
    assert "There is no tool named 'uber'." in sent
    assert "Did you mean 'uber.ride'? If it does what the task asks, call it" in sent
    assert "if no tool does, do not call one: reply with final_answer in one or two" in sent
    assert sent.endswith(NO_TOOL_FITS_HINT)


async def test_revision_7_asks_for_a_short_answer_when_no_tool_is_close() -> None:
    sent = await second_request_text(7, "weather")
    assert "Did you mean" not in sent
    assert NO_TOOL_FITS in sent and "in one or two sentences" in sent
    assert "call it by its exact name" in sent  # a listed tool that fits comes first


async def test_revision_6_keeps_its_unknown_tool_texts() -> None:
    sent = await second_request_text(6, "uber")
    assert "Did you mean" not in sent and NO_TOOL_FITS not in sent
    assert sent.endswith(UNKNOWN_TOOL_HINT)


async def run_in_turn(revision: int) -> tuple[Any, ScriptedModel]:
    """`ride` and `notify` in turn, each answered "ok", until a guard stops the run."""
    replies = [call("ride", to="x"), call("notify", to="me")] * 5 + [final("done")]
    model = ScriptedModel(replies, strict=False)
    agent = AgentExecutor(
        model,
        [ok_tool("ride"), ok_tool("notify")],
        options=AgentOptions(revision=revision, max_iterations=12),
    )
    return await agent.run("ride to x and tell me"), model


async def test_two_calls_in_turn_with_results_already_seen_stop_the_run() -> None:
    result, model = await run_in_turn(7)
    assert [s.tool_name for s in result.steps] == ["ride", "notify", "ride", "notify"]
    third = str(model.requests[3].messages[-1].content)  # after ride, notify, ride
    assert "you have made the call ride" in third and "again, after notify" in third
    # the stop is a repetition, then the last turn (no tool) asks for the answer
    assert "were made in turn, twice" in str(model.requests[4].messages[-1].content)
    assert (result.status, result.reason) == ("stopped", "repetition")  # no answer scripted
    assert len(model.requests) == 5


async def test_revision_6_lets_two_calls_in_turn_go_on() -> None:
    result, _ = await run_in_turn(6)
    assert len(result.steps) > 4  # until the no-progress guard


async def test_calls_in_turn_with_new_results_go_on() -> None:
    counter = count()

    @tool
    def tick(to: str) -> str:
        """Count one."""
        return f"tick {next(counter)}"

    replies = [call("tick", to="a"), call("tick", to="b")] * 3 + [final("counted")]
    model = ScriptedModel(replies)
    result = await AgentExecutor(model, [tick], options=AgentOptions(revision=7)).run("count")
    assert (result.status, result.answer, len(result.steps)) == ("completed", "counted", 6)
