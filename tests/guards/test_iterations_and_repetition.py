"""Max iterations (tiers and explicit numbers), repetition and no progress."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from guard_helpers import call, final

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.events import ModelResponseEvent, RunStoppedEvent, WarningEvent
from loopwright.guards import BasePolicy, GuardState, Stop
from loopwright.messages import ModelResponse, ToolCall
from loopwright.testing import ScriptedModel
from loopwright.tools import ToolContext, tool


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: what to look up
    """
    return f"value of {key}"


@tool
def status() -> str:
    """Report the same status every time."""
    return "still waiting"


@tool
def poll(attempt: int) -> str:
    """Poll a job; it never changes.

    Args:
        attempt: the attempt number
    """
    return "job pending"


@tool
def write_note(ctx: ToolContext, name: str) -> str:
    """Write a note file into the workspace.

    Args:
        name: file name
    """
    (ctx.workspace / name).write_text("note")
    ctx.record_write(name, None, "h")
    return "job pending"


def endless(tool_name: str, count: int, **args: Any) -> list[str]:
    return [call(tool_name, key=f"k{i}", **args) for i in range(count)]


@pytest.mark.parametrize(("tier", "limit"), [("trivial", 5), ("standard", 10), ("complex", 20)])
async def test_tier_limits_stop_an_endless_run(tier: Any, limit: int) -> None:
    model = ScriptedModel(endless("lookup", 30), strict=False)
    result = await AgentExecutor(model, [lookup], options=AgentOptions(tier=tier)).run("loop")
    assert result.status == "stopped" and result.reason == "max_iterations"
    assert result.iterations == limit
    assert len(model.requests) == limit


async def test_explicit_limit_overrides_tier() -> None:
    model = ScriptedModel(endless("lookup", 30), strict=False)
    options = AgentOptions(tier="complex", max_iterations=3)
    result = await AgentExecutor(model, [lookup], options=options).run("loop")
    assert (result.reason, len(model.requests)) == ("max_iterations", 3)


async def test_run_that_finishes_within_the_limit_is_not_stopped() -> None:
    model = ScriptedModel([*endless("lookup", 4), final("found")])
    options = AgentOptions(tier="trivial")
    result = await AgentExecutor(model, [lookup], options=options).run("find it")
    assert result.status == "completed" and result.answer == "found"
    assert result.iterations == 5


async def test_third_identical_call_stops_and_second_gets_a_nudge() -> None:
    model = ScriptedModel([call("lookup", key="same")] * 5, strict=False)
    events: list[Any] = []

    async def collect(event: Any) -> None:
        events.append(event)

    result = await AgentExecutor(model, [lookup]).run("repeat", on_event=collect)
    assert result.status == "stopped" and result.reason == "repetition"
    # three calls run; the fourth request is the last turn, which asks for the answer
    assert len(model.requests) == 4 and len(result.steps) == 3
    assert "Do not call a tool again" in model.requests[3].messages[-1].content
    second_observation = model.requests[2].messages[-1].content
    assert "same call" in second_observation and "Do not repeat it" in second_observation
    assert "Do not repeat it" not in model.requests[1].messages[-1].content
    stop = next(e for e in events if isinstance(e, RunStoppedEvent))
    assert stop.reason == "repetition" and "3 times in a row" in stop.message


async def test_after_a_repetition_stop_a_final_answer_with_no_tool_offered_completes_the_run() -> (
    None
):
    """Seed 003: "same tool+args called 3x consecutively -> force stop". After the stop, the
    last turn asks once for the answer from the results so far, with no tool offered (the
    tool does not run a fourth time); its final answer completes the run, and the log says
    so before that call."""
    same = ModelResponse(tool_calls=(ToolCall("c", "lookup", {"key": "same"}),))
    model = ScriptedModel([same, same, same, "the value is: value of same"], tool_mode="native")
    events: list[Any] = []
    result = await AgentExecutor(model, [lookup]).run("find it", on_event=events.append)
    assert (result.status, result.answer) == ("completed", "the value is: value of same")
    assert len(result.steps) == 3  # the third identical call was the last one run
    assert [len(r.tools) for r in model.requests] == [1, 1, 1, 0]  # the last turn: no tool
    [warning] = [e for e in events if isinstance(e, WarningEvent)]
    assert "3 times in a row" in warning.message and "final answer" in warning.message
    assert events.index(warning) < max(
        i for i, e in enumerate(events) if isinstance(e, ModelResponseEvent)
    )


async def test_only_consecutive_identical_calls_count() -> None:
    """The count starts again after another call: a, a, b, a, a is no repetition."""
    keys = ["a", "a", "b", "a", "a"]
    model = ScriptedModel([*(call("lookup", key=k) for k in keys), final("done")])
    options = AgentOptions(tier="complex")
    result = await AgentExecutor(model, [lookup], options=options).run("look them up")
    assert (result.status, len(result.steps)) == ("completed", 5)


async def test_repetition_threshold_is_configurable() -> None:
    model = ScriptedModel([call("lookup", key="same")] * 6, strict=False)
    options = AgentOptions(repetition_threshold=5)
    result = await AgentExecutor(model, [lookup], options=options).run("repeat")
    assert result.reason == "repetition" and len(result.steps) == 5


async def test_same_tool_with_different_arguments_is_not_repetition() -> None:
    replies = [call("lookup", key="a"), call("lookup", key="b"), call("lookup", key="c")]
    model = ScriptedModel([*replies, final("done")])
    result = await AgentExecutor(model, [lookup]).run("three lookups")
    assert result.status == "completed"


async def test_no_new_information_for_five_rounds_stops() -> None:
    model = ScriptedModel([call("poll", attempt=i) for i in range(12)], strict=False)
    options = AgentOptions(tier="complex")
    result = await AgentExecutor(model, [poll], options=options).run("wait for the job")
    assert result.status == "stopped" and result.reason == "no_progress"
    # the first poll is new information; the next five are not
    assert len(result.steps) == 6


async def test_no_progress_limit_is_configurable() -> None:
    model = ScriptedModel([call("poll", attempt=i) for i in range(12)], strict=False)
    options = AgentOptions(tier="complex", no_progress_limit=2)
    result = await AgentExecutor(model, [poll], options=options).run("wait")
    assert result.reason == "no_progress" and len(result.steps) == 3


async def test_new_observations_are_progress() -> None:
    model = ScriptedModel([*endless("lookup", 8), final("all found")])
    options = AgentOptions(tier="complex")
    result = await AgentExecutor(model, [lookup], options=options).run("look up eight keys")
    assert result.status == "completed"


async def test_workspace_changes_are_progress(tmp_path: Path) -> None:
    replies = [call("write_note", name=f"n{i}.txt") for i in range(8)]
    model = ScriptedModel([*replies, final("notes written")])
    agent = AgentExecutor(
        model, [write_note], options=AgentOptions(tier="complex"), workspace=tmp_path
    )
    result = await agent.run("write eight notes")
    assert result.status == "completed"
    assert len(result.modified_files) == 8


async def test_last_turn_turns_a_repetition_stop_into_the_answer_from_the_results() -> None:
    """By default the run that repeats a call gets one more model call, told to stop
    calling tools; its final answer completes the run. No tool runs again."""
    same = call("lookup", key="k")
    model = ScriptedModel([same, same, same, final("value of k")])
    options = AgentOptions(repetition_threshold=3)
    events: list[Any] = []

    async def keep(event: Any) -> None:
        events.append(event)

    result = await AgentExecutor(model, [lookup], options=options).run("find k", on_event=keep)
    assert result.status == "completed" and result.answer == "value of k"
    assert len(result.steps) == 3  # the three calls; the last turn ran no tool
    last_request = model.requests[-1].messages[-1].content
    assert "Do not call a tool again" in last_request and "3 times in a row" in last_request
    schema = model.requests[-1].output_schema  # a constraining backend can only answer
    assert schema is not None and schema["required"] == ["thought", "final_answer"]
    assert model.requests[0].output_schema is None
    assert not any(isinstance(e, RunStoppedEvent) for e in events)
    model.assert_exhausted()


async def test_last_turn_that_calls_a_tool_again_still_stops() -> None:
    same = call("lookup", key="k")
    model = ScriptedModel([same, same, same, same])
    options = AgentOptions(repetition_threshold=3)
    result = await AgentExecutor(model, [lookup], options=options).run("find k")
    assert result.status == "stopped" and result.reason == "repetition"
    assert len(result.steps) == 3  # the fourth call was read, not run
    model.assert_exhausted()


async def test_without_the_last_turn_a_repetition_stop_asks_nothing_more() -> None:
    same = call("lookup", key="k")
    model = ScriptedModel([same, same, same])
    options = AgentOptions(last_turn=False)
    result = await AgentExecutor(model, [lookup], options=options).run("find k")
    assert result.status == "stopped" and result.reason == "repetition"
    assert len(model.requests) == 3


class RefuseAfterThreeCalls(BasePolicy):
    """Stands in for a budget that the three calls used up."""

    def before_model_call(self, state: GuardState) -> Stop | None:
        if len(state.call_signatures) >= 3:
            return Stop("budget", "Stopped before a model call: over the budget.")
        return None


class RefuseInIteration(BasePolicy):
    """A budget used up by the first call of iteration `number`: only a second call of
    that iteration (a correction) is refused."""

    def __init__(self, number: int) -> None:
        self.number = number

    def before_model_call(self, state: GuardState) -> Stop | None:
        if state.iteration >= self.number:
            return Stop("budget", "Stopped before a model call: over the budget.")
        return None


async def test_the_last_turn_is_not_made_when_a_before_call_policy_forbids_a_call() -> None:
    same = call("lookup", key="k")
    model = ScriptedModel([same, same, same, final("value of k")], strict=False)
    agent = AgentExecutor(model, [lookup], policies=[RefuseAfterThreeCalls()])
    result = await agent.run("find k")
    assert result.status == "stopped" and result.reason == "repetition"
    assert len(model.requests) == 3  # the fourth reply was never asked for


async def test_a_correction_at_the_iteration_limit_still_obeys_the_other_policies() -> None:
    """The iteration limit answers first at the last iteration; the budget behind it must
    not be masked (a correction is a model call too)."""
    same = call("lookup", key="k")
    options = AgentOptions(max_iterations=4, repetition_threshold=5, last_turn=False)
    model = ScriptedModel([same, same, same, "", final("k")], strict=False)  # "": unreadable
    agent = AgentExecutor(model, [lookup], options=options, policies=[RefuseInIteration(4)])
    result = await agent.run("find k")
    assert result.status == "stopped" and result.reason == "budget"
    assert len(model.requests) == 4  # the correction was not asked for
