"""The iteration limit is hard (issue 34, item 1): the last allowed model call is offered
without tools, a run never makes more model calls than its limit, and a stop for
repetition is never turned into an answer past the limit.

The seed lines held here:

- seed 000: "ReAct loop executes up to max_iterations"
- seed 001: "**Safety**: Hard `max_steps` limit and `SecureManager` scrubbing are mandatory."
- seed 001: "Raise `MaxStepsExceeded`."
- seed 003: "Repetition detection: same tool+args called 3x consecutively → force stop"
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.compat import AgentExecutor as SeedAgentExecutor
from loopwright.compat import MaxStepsExceeded
from loopwright.events import (
    Event,
    IterationStartedEvent,
    ParseErrorEvent,
    RunFinishedEvent,
    WarningEvent,
)
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def call(key: str) -> str:
    return json.dumps({"thought": "look", "action": "lookup", "action_input": {"key": key}})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def native_call(key: str) -> dict[str, Any]:
    return {
        "content": "",
        "tool_calls": [{"function": {"name": "lookup", "arguments": {"key": key}}}],
    }


async def run_collecting(agent: AgentExecutor, request: str) -> tuple[Any, list[Event]]:
    events: list[Event] = []
    return await agent.run(request, on_event=events.append), events


async def test_the_last_allowed_call_is_offered_without_tools_and_none_comes_after() -> None:
    """Seed 000: "ReAct loop executes up to max_iterations"; seed 001: "Hard `max_steps`
    limit". Three identical native calls with a limit of three: two run, the third call
    is the last the limit allows and offers no tool, and nothing is asked after it."""
    model = ScriptedModel([native_call("k")] * 3, tool_mode="native")
    agent = AgentExecutor(model, [lookup], options=AgentOptions(max_iterations=3))
    result, events = await run_collecting(agent, "find k")
    assert len(model.requests) == 3
    assert [bool(r.tools) for r in model.requests] == [True, True, False]
    assert "Do not call a tool again" in model.requests[2].messages[-1].content
    assert [e.iteration_number for e in events if isinstance(e, IterationStartedEvent)] == [1, 2, 3]
    assert result.status == "stopped" and result.reason == "max_iterations"
    assert len(result.steps) == 2  # the third reply's call was read, not run
    assert any(isinstance(e, WarningEvent) and "limit (3)" in e.message for e in events)


async def test_the_last_allowed_call_answers_within_the_limit() -> None:
    """Seed 000: "Final answer terminates loop early": the answer given in the last allowed
    call (offered without tools) completes the run, still within the limit."""
    model = ScriptedModel([call("a"), call("b"), final("a and b")])
    agent = AgentExecutor(model, [lookup], options=AgentOptions(max_iterations=3))
    result = await agent.run("find a and b")
    assert (result.status, result.answer, result.iterations) == ("completed", "a and b", 3)
    assert len(model.requests) == 3


async def test_a_repetition_stop_is_not_answered_past_the_limit() -> None:
    """Seed 003: "Repetition detection: same tool+args called 3x consecutively → force
    stop". With the limit at 3 and no last turn, the third identical call stops the run;
    no fourth model call turns the stop into `completed`."""
    model = ScriptedModel([call("k")] * 3)
    options = AgentOptions(max_iterations=3, last_turn=False)
    result, events = await run_collecting(AgentExecutor(model, [lookup], options=options), "k")
    assert (result.status, result.reason) == ("stopped", "repetition")
    assert len(model.requests) == 3
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent) and finished.status == "stopped"


async def test_the_last_turn_after_a_repetition_uses_the_last_allowed_call() -> None:
    """Seed 003's force stop with the limit one call beyond it: the last turn is the
    limit's last call (iteration 4 of 4); a reply that calls the tool again leaves the
    repetition stop standing, and no fifth call is made."""
    model = ScriptedModel([call("k")] * 4)
    options = AgentOptions(max_iterations=4)
    result, events = await run_collecting(AgentExecutor(model, [lookup], options=options), "k")
    assert (result.status, result.reason) == ("stopped", "repetition")
    assert len(model.requests) == 4 and len(result.steps) == 3
    numbers = [e.iteration_number for e in events if isinstance(e, IterationStartedEvent)]
    assert max(numbers) == 4 and all(
        e.max_iterations == 4 for e in events if isinstance(e, IterationStartedEvent)
    )


async def test_a_correction_counts_against_the_limit() -> None:
    """Seed 001: "Hard `max_steps` limit": a corrective retry is a model call too. With a
    limit of two, the unreadable second reply gets no retry (it would be a third call)."""
    model = ScriptedModel([call("a"), ""])
    agent = AgentExecutor(model, [lookup], options=AgentOptions(max_iterations=2))
    result, events = await run_collecting(agent, "find a")
    assert len(model.requests) == 2
    assert (result.status, result.reason) == ("stopped", "max_iterations")
    parse_error = next(e for e in events if isinstance(e, ParseErrorEvent))
    assert parse_error.will_retry is False


async def test_a_correction_inside_the_limit_is_still_made() -> None:
    model = ScriptedModel([call("a"), "", final("value of a")])
    agent = AgentExecutor(model, [lookup], options=AgentOptions(max_iterations=3))
    result = await agent.run("find a")
    assert (result.status, result.answer) == ("completed", "value of a")
    assert len(model.requests) == 3


@pytest.mark.parametrize("replies", [[call("k")] * 3, [call("a"), call("b"), call("c")]])
async def test_seed_001_raises_max_steps_exceeded_when_its_steps_run_out(
    replies: list[str],
) -> None:
    """Seed 001: "`while steps < max_steps`: ... If Action -> Call Tool ... Raise
    `MaxStepsExceeded`." Three identical calls (the repetition guard fires at the last
    step) or three different ones: three model calls, every step may call a tool, and
    run() raises MaxStepsExceeded instead of returning an answer."""
    model = ScriptedModel(replies)
    agent = SeedAgentExecutor(model, [lookup], max_steps=3)
    with pytest.raises(MaxStepsExceeded) as raised:
        await agent.run("loop")
    assert raised.value.max_steps == 3
    assert len(model.requests) == 3 and len(agent.history) == 3
