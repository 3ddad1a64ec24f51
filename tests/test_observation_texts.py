"""Revision 5's prompted observations and progress notes: a result says what its tool
returns (the first line of the tool's description), and the note asks for every part of
the task before a final answer. Revision 4's texts stay as they were, so its runs replay."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.prompts._revisions import REVISIONS
from loopwright.prompts._turn_notes import (
    EVERY_PART_HINT,
    NEXT_STEP_HINT,
    TOOL_SUMMARY_CHARS,
    observation_text,
    tool_summary,
)
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool
def product_price(product: str) -> float:
    """The price in USD of a product in the shop catalogue.

    Args:
        product: product name, e.g. keyboard
    """
    return {"monitor": 189.0}[product]


@tool(description="")
def undescribed(x: int) -> int:
    return x


def call(tool_name: str, /, **args: Any) -> str:
    return json.dumps({"thought": f"use {tool_name}", "action": tool_name, "action_input": args})


async def second_message(revision: int, tool_name: str, tools: list[Any], **args: Any) -> str:
    model = ScriptedModel([call(tool_name, **args), json.dumps({"final_answer": "done"})])
    options = AgentOptions(revision=revision)
    result = await AgentExecutor(model, tools, options=options).run("How much is the monitor?")
    assert result.status == "completed"
    return model.requests[1].messages[-1].content


async def test_revision_5_says_what_the_result_is_and_asks_for_every_part() -> None:
    sent = await second_message(5, "product_price", [product_price], product="monitor")
    head = "Observation from product_price (the price in USD of a product in the shop catalogue)"
    assert sent.startswith(f"{head}: 189.0\n\n")
    assert sent.endswith(EVERY_PART_HINT)


@pytest.mark.parametrize("revision", [1, 2, 3, 4])
async def test_earlier_revisions_keep_their_texts(revision: int) -> None:
    sent = await second_message(revision, "product_price", [product_price], product="monitor")
    assert sent.startswith("Observation from product_price: 189.0\n\n")
    assert sent.endswith(NEXT_STEP_HINT)
    assert not REVISIONS[revision].texts.observations_say_what


async def test_a_tool_without_a_description_is_named_alone() -> None:
    sent = await second_message(5, "undescribed", [undescribed], x=3)
    assert sent.startswith("Observation from undescribed: 3\n\n")


def test_the_summary_is_the_first_line_without_its_full_stop() -> None:
    assert tool_summary("Add two numbers.\n\nArgs:\n  a: one") == "add two numbers"
    assert tool_summary("  Current weather: Celsius.  ") == "current weather: Celsius"


def test_a_leading_acronym_keeps_its_capitals() -> None:
    assert tool_summary("URL of the page.") == "URL of the page"
    assert tool_summary("A list.") == "A list"  # one letter: not known to start a sentence


def test_a_long_first_line_is_cut() -> None:
    summary = tool_summary("Fetch " + "very " * 40 + "much.")
    assert len(summary) == TOOL_SUMMARY_CHARS and summary.endswith("…")


def test_no_summary_no_parentheses() -> None:
    assert observation_text("echo", "hi") == "Observation from echo: hi"
    assert observation_text("echo", "hi", "repeat") == "Observation from echo (repeat): hi"
