"""Several calls in one prompted reply: with `max_calls_per_reply` given (more than 1), a
prompted run (revision 8 on) offers several independent JSON calls a reply, one object a
line, reads them all and runs them in order as one step. Without it (the default) a
prompted reply is read for one call, as before; a failed call or a call waiting for
approval ends the batch; a reply is cut after its last call, not after its first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.parsing import ActionEnd, action_text
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

EXAMPLE = Path(__file__).parents[1] / "examples" / "several_calls.py"
RAN: list[tuple[str, str]] = []


@tool(effect="read")
def weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city
    """
    RAN.append(("weather", city))
    if city == "Atlantis":
        raise ValueError("no such city")
    return f"sunny in {city}"


@tool(effect="destructive")
def book(city: str) -> str:
    """Book a trip to a city.

    Args:
        city: the city
    """
    RAN.append(("book", city))
    return f"booked {city}"


@pytest.fixture(autouse=True)
def _clean() -> None:
    RAN.clear()


def call(name: str, **arguments: Any) -> str:
    return json.dumps(
        {"thought": f"use {name}", "action": name, "action_input": arguments, "is_final": False}
    )


FINAL = json.dumps({"thought": "done", "final_answer": "done", "is_final": True})
TWO_CITIES = call("weather", city="Oslo") + "\n" + call("weather", city="Rome")


async def run(replies: list[str], options: AgentOptions, **kwargs: Any) -> ScriptedModel:
    model = ScriptedModel(replies, stream_chars=7)  # streamed: the reply is cut as it comes
    result = await AgentExecutor(model, [weather, book], options=options, **kwargs).run(
        "The weather in Oslo and in Rome?", on_event=lambda event: None
    )
    assert result.status == "completed", result.message
    return model


async def test_a_prompted_reply_runs_its_json_calls_in_order_as_one_step() -> None:
    model = await run([TWO_CITIES, FINAL], AgentOptions(max_calls_per_reply=4))
    assert RAN == [("weather", "Oslo"), ("weather", "Rome")]
    assert len(model.requests) == 2  # both calls from one reply, then the answer
    observation = str(model.requests[1].messages[-1].content)
    assert "sunny in Oslo" in observation and "sunny in Rome" in observation
    system = str(model.requests[0].messages[0].content)
    assert "write up to 4 such objects in one reply, one per line" in system
    assert "- Call one tool per reply" not in system


@pytest.mark.parametrize(
    "fenced",
    [
        "```json\n" + TWO_CITIES + "\n```",  # one block of two objects: JSON repair reads Rome
        "```json\n" + TWO_CITIES.replace("\n", "\n```\n```json\n") + "\n```",  # a block each
    ],
)
async def test_calls_in_code_fences_are_read_all_and_in_order(fenced: str) -> None:
    invented = "\nObservation from weather: sunny\n" + FINAL
    model = await run([fenced + invented, FINAL], AgentOptions(max_calls_per_reply=4))
    assert RAN == [("weather", "Oslo"), ("weather", "Rome")]
    assert "Observation from weather: sunny" not in str(model.requests[1].messages)  # cut


async def test_by_default_a_prompted_reply_runs_one_call_and_the_prompt_asks_for_one() -> None:
    model = await run([TWO_CITIES, call("weather", city="Rome"), FINAL], AgentOptions())
    assert RAN == [("weather", "Oslo"), ("weather", "Rome")]
    assert len(model.requests) == 3  # one call a reply: Rome needed a reply of its own
    system = str(model.requests[0].messages[0].content)
    assert "Reply with exactly one JSON object on one line" in system
    assert "- Call one tool per reply, and use each result for the next step" in system


async def test_revision_7_reads_one_call_a_reply_whatever_the_option() -> None:
    options = AgentOptions(max_calls_per_reply=4, revision=7)
    model = await run([TWO_CITIES, call("weather", city="Rome"), FINAL], options)
    assert RAN == [("weather", "Oslo"), ("weather", "Rome")]
    assert len(model.requests) == 3


async def test_calls_past_the_limit_are_answered_not_run() -> None:
    reply = TWO_CITIES + "\n" + call("weather", city="Lima")
    model = await run([reply, FINAL], AgentOptions(max_calls_per_reply=2))
    assert RAN == [("weather", "Oslo"), ("weather", "Rome")]
    observation = str(model.requests[1].messages[-1].content)
    assert "Not run: a reply may make at most 2 tool calls; this one made 3." in observation


async def test_a_failed_call_ends_the_batch_the_calls_after_it_are_not_run() -> None:
    reply = call("weather", city="Atlantis") + "\n" + call("book", city="Atlantis")
    model = await run([reply, FINAL], AgentOptions(max_calls_per_reply=4))
    assert RAN == [("weather", "Atlantis")]  # the booking counted on a result it never saw
    observation = str(model.requests[1].messages[-1].content)
    assert "no such city" in observation
    assert "Not run: the call to weather before it in this reply failed" in observation


async def test_a_call_that_waits_for_approval_ends_the_batch_and_nothing_runs_twice() -> None:
    reply = call("weather", city="Oslo") + "\n" + call("book", city="Oslo")
    model = ScriptedModel([reply, FINAL])
    agent = AgentExecutor(
        model,
        [weather, book],
        options=AgentOptions(max_calls_per_reply=4),
        approve=["destructive"],
        on_pending="wait",
    )
    result = await agent.run("Book Oslo if it is sunny")
    assert result.status == "waiting" and RAN == [("weather", "Oslo")]
    [pending] = result.pending_approvals
    assert pending.tool_name == "book"
    done = await agent.resume(result, approve=[pending.gate_id])
    assert done.success
    assert RAN == [("weather", "Oslo"), ("book", "Oslo")]  # the weather call was not repeated
    assert len(model.requests) == 2


async def test_prose_after_a_call_is_not_a_second_call() -> None:
    reply = call("weather", city="Oslo") + "\nObservation: sunny\n" + call("weather", city="Rome")
    await run([reply, FINAL], AgentOptions(max_calls_per_reply=4))
    assert RAN == [("weather", "Oslo")]


def test_a_reply_is_cut_after_its_last_call_in_a_row_whatever_its_pieces() -> None:
    invented = "\nObservation: sunny\n" + FINAL
    text = TWO_CITIES + invented
    assert action_text(text, calls_in_a_row=True) == TWO_CITIES
    one = call("weather", city="Oslo")
    assert action_text(text) == one[: one.index(', "is_final"')] + "}"  # the first call only
    for size in (1, 3, 10):
        watch = ActionEnd(calls_in_a_row=True)
        ends = [watch.feed(text[i : i + size]) for i in range(0, len(text), size)]
        assert ends[-1] == len(TWO_CITIES)
    listed = "[" + TWO_CITIES.replace("\n", ", ") + "]"
    assert action_text(listed + invented, calls_in_a_row=True) == listed
    assert action_text(call("weather", city="Oslo") + "\n" + FINAL, calls_in_a_row=True) == (
        call("weather", city="Oslo")
    )  # an answer after the calls is not run with them


@pytest.mark.subprocess
def test_the_example_asks_for_both_cities_in_one_reply() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "max_calls_per_reply=4: ['weather(Oslo)', 'weather(Rome)'] in 2 model calls",
        "default:               ['weather(Oslo)', 'weather(Rome)'] in 3 model calls",
    ]
