"""Revision 6: a failed call's observation gives advice that follows its error (the same
call again when the error asks for it), and after a call to a tool that does not exist the
progress note offers the listed tools or an answer. Revision 5 keeps seed 002's "try again
with different parameters" and its every-part hint, so its runs replay as they ran."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.errors import ToolError
from loopwright.prompts._turn_notes import EVERY_PART_HINT, UNKNOWN_TOOL_HINT
from loopwright.prompts.errors import FAILED_CALL_ADVICE
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

BUSY = "price service busy, please retry the same call"
SEED_ADVICE = "Attempt 1. Please try again with different parameters"


@tool
def stock_price(symbol: str) -> float:
    """The latest stock price for a ticker symbol."""
    raise ToolError(BUSY)


def call(tool_name: str, /, **args: Any) -> str:
    return json.dumps({"thought": f"use {tool_name}", "action": tool_name, "action_input": args})


async def second_request(revision: int, first_reply: Any, tool_mode: str = "prompted") -> Any:
    """The messages of the request that follows `first_reply`."""
    model = ScriptedModel([first_reply, json.dumps({"final_answer": "no price"})])
    options = AgentOptions(revision=revision, tool_mode=tool_mode)  # type: ignore[arg-type]
    result = await AgentExecutor(model, [stock_price], options=options).run("ACME's price?")
    assert result.status == "completed"
    return model.requests[1].messages


async def test_revision_6_advice_follows_the_error_not_against_it() -> None:
    sent = (await second_request(6, call("stock_price", symbol="ACME")))[-1].content
    assert f"Tool 'stock_price' failed: {BUSY}\n{FAILED_CALL_ADVICE}" in sent
    assert "make the same call again" in sent and "different parameters" not in sent
    assert sent.endswith(EVERY_PART_HINT)  # the tool exists: the usual note


async def test_revision_5_keeps_the_seed_advice() -> None:
    sent = (await second_request(5, call("stock_price", symbol="ACME")))[-1].content
    assert f"Tool 'stock_price' failed: {BUSY}\n{SEED_ADVICE}" in sent
    assert FAILED_CALL_ADVICE not in sent


async def test_native_tool_results_get_the_revision_6_advice_too() -> None:
    reply = {"tool_calls": [{"id": "c1", "name": "stock_price", "arguments": {"symbol": "A"}}]}
    messages = await second_request(6, reply, tool_mode="native")
    result = next(m for m in messages if m.role == "tool")
    assert result.content.startswith(f"Tool 'stock_price' failed: {BUSY}\n{FAILED_CALL_ADVICE}")
    assert "different parameters" not in result.content


@pytest.mark.parametrize(("revision", "hint"), [(6, UNKNOWN_TOOL_HINT), (5, EVERY_PART_HINT)])
async def test_after_an_unknown_tool_the_note_offers_the_tools_or_an_answer(
    revision: int, hint: str
) -> None:
    sent = (await second_request(revision, call("say", message="hello")))[-1].content
    assert "There is no tool named 'say'. The only tools are: stock_price." in sent
    assert sent.endswith(hint)


async def test_the_hint_goes_back_to_the_usual_one_after_a_known_tool() -> None:
    replies = [call("search", query="x"), call("stock_price", symbol="ACME")]
    model = ScriptedModel([*replies, json.dumps({"final_answer": "no price"})])
    await AgentExecutor(model, [stock_price], options=AgentOptions(revision=6)).run("price?")
    assert model.requests[1].messages[-1].content.endswith(UNKNOWN_TOOL_HINT)
    assert model.requests[2].messages[-1].content.endswith(EVERY_PART_HINT)


INVENTED = [call("color", colors=["blue", "yellow"]), call("read", path="colors.txt")]


async def test_three_invented_tools_in_a_row_end_in_a_last_turn() -> None:
    model = ScriptedModel([*INVENTED, INVENTED[0], json.dumps({"final_answer": "green"})])
    result = await AgentExecutor(model, [stock_price], options=AgentOptions(revision=6)).run(
        "What do blue and yellow make?"
    )
    assert result.status == "completed" and result.answer == "green"
    assert len(model.requests) == 4 and len(result.steps) == 3
    last = model.requests[3].messages[-1].content
    assert "The last 3 tool calls named tools this run does not have (color, read, color)" in last
    assert "Do not call a tool again" in last


async def test_revision_5_lets_invented_tools_alternate() -> None:
    replies = [*INVENTED, *INVENTED, INVENTED[0], json.dumps({"final_answer": "green"})]
    model = ScriptedModel(replies)
    result = await AgentExecutor(model, [stock_price], options=AgentOptions(revision=5)).run(
        "What do blue and yellow make?"
    )
    assert result.status == "completed" and len(result.steps) == 5  # no stop in between


async def test_a_real_tool_between_invented_ones_resets_the_count() -> None:
    real = call("stock_price", symbol="ACME")
    replies = [*INVENTED, real, *INVENTED, json.dumps({"final_answer": "none"})]
    model = ScriptedModel(replies)
    result = await AgentExecutor(model, [stock_price], options=AgentOptions(revision=6)).run("x")
    assert result.status == "completed" and len(result.steps) == 5
    assert all("does not have" not in r.messages[-1].content for r in model.requests)


async def test_a_refused_call_to_an_unknown_tool_is_not_counted_as_one() -> None:
    """A call the user refused did not run: the note after it is the usual one, and it does
    not count towards the three invented tools in a row (GuardState.unknown_tool_calls
    lines up with the calls that ran)."""
    replies = [call("say", message="hi"), *INVENTED, json.dumps({"final_answer": "none"})]
    model = ScriptedModel(replies)
    refuse_say = lambda c: c.name == "say"  # noqa: E731 (no gatekeeper: refused)
    agent = AgentExecutor(model, [stock_price], approve=refuse_say, options=AgentOptions())
    result = await agent.run("x")
    sent = model.requests[1].messages[-1].content
    assert "not run" in sent and sent.endswith(EVERY_PART_HINT)
    assert result.status == "completed" and result.answer == "none"
    assert len(model.requests) == 4 and len(result.steps) == 2  # color and read ran, no stop
    assert all("does not have" not in r.messages[-1].content for r in model.requests)
