"""`AgentOptions.answer_tools`: a run whose answer is a tool's result ends with that result
once the call succeeds, without a model call to restate it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.errors import ToolError
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

EXAMPLE = Path(__file__).parents[1] / "examples" / "answer_tools.py"


@tool
def convert(amount: float, to: str) -> str:
    """Convert an amount of euros to another currency."""
    if to != "USD":
        raise ToolError(f"unknown currency {to!r}: use USD")
    return f"{amount * 1.1:.2f} USD"


def call(**args: Any) -> str:
    return json.dumps({"thought": "convert", "action": "convert", "action_input": args})


def final(text: str) -> str:
    return json.dumps({"thought": "done", "final_answer": text})


async def test_the_tools_result_is_the_answer_with_no_model_call_after_it() -> None:
    model = ScriptedModel([call(amount=10, to="USD")])
    options = AgentOptions(answer_tools=("convert",))
    result = await AgentExecutor(model, [convert], options=options).run("10 EUR in USD?")
    assert (result.status, result.answer) == ("completed", "11.00 USD")
    assert len(model.requests) == 1 and len(result.steps) == 1


async def test_without_it_the_model_restates_the_result() -> None:
    model = ScriptedModel([call(amount=10, to="USD"), final("10 EUR is 11.00 USD.")])
    result = await AgentExecutor(model, [convert]).run("10 EUR in USD?")
    assert (result.answer, len(model.requests)) == ("10 EUR is 11.00 USD.", 2)


async def test_a_failed_call_of_an_answer_tool_goes_back_to_the_model() -> None:
    model = ScriptedModel([call(amount=10, to="usd"), call(amount=10, to="USD")])
    options = AgentOptions(answer_tools=("convert",))
    result = await AgentExecutor(model, [convert], options=options).run("10 EUR in USD?")
    assert (result.status, result.answer) == ("completed", "11.00 USD")
    assert "unknown currency 'usd'" in str(model.requests[1].messages[-1].content)


def test_the_option_is_recorded_and_read_back() -> None:
    options = AgentOptions(answer_tools=("convert",))
    recorded = json.loads(json.dumps(options.to_dict()))
    assert AgentOptions.from_dict(recorded) == options
    older = {k: v for k, v in recorded.items() if k != "answer_tools"}
    assert AgentOptions.from_dict(older).answer_tools == ()


@pytest.mark.subprocess
def test_the_example_ends_with_the_tools_result_after_one_model_call() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "answer_tools:    '11.00 USD' after 1 model call",
        "without:         '10 EUR is 11.00 USD.' after 2 model calls",
    ]
