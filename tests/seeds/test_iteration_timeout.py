"""Seed 000's iteration timeout, through its executor (`AutonomousSkillExecutor` with
`AutonomousConfig(options=AgentOptions(iteration_timeout_s=...))`).

Seed 000's line held here:

- "Use `asyncio.timeout` for iteration timeout enforcement": each iteration's model call
  gets the whole limit (it is not a budget for the run); a call over it is cancelled, as
  `asyncio.timeout` cancels, not left running; the run stops with reason
  `iteration_timeout` within a bound of the limit, and its done event says so.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Literal

import pytest

from loopwright import AgentOptions
from loopwright.compat import AutonomousConfig, AutonomousSkillExecutor, TaskDoneEvent
from loopwright.messages import ModelRequest, ModelResponse
from loopwright.skills import Skill, load_skill
from loopwright.tools import ToolExecutor, ToolRegistry, tool

LIMIT_S = 2.0
CALL_S = 0.6
"""Each call of the slow model: well under the limit, four of them well over it."""
STOP_BOUND_S = 10.0
"""From a hung call's start to the run's end: the limit, plus a loaded machine's delay."""


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def action(key: str) -> str:
    return json.dumps({"thought": "look", "action": "lookup", "action_input": {"key": key}})


class TimedModel:
    """Calls that take CALL_S each (a slow server, not synchronisation); from the call
    numbered `hang_on` on, a call never returns unless cancelled (which it records)."""

    name = "timed"
    preferred_tool_mode: Literal["prompted"] = "prompted"

    def __init__(self, replies: list[str], hang_on: int | None = None) -> None:
        self.replies = replies
        self.hang_on = hang_on
        self.calls = 0
        self.hung_at: float | None = None
        self.cancelled = False

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.hang_on is not None and self.calls >= self.hang_on:
            self.hung_at = time.monotonic()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled = True
                raise
        await asyncio.sleep(CALL_S)  # how long the slow server takes to answer
        return ModelResponse(text=self.replies[self.calls - 1])


@pytest.fixture
def skill(tmp_path: Path) -> Skill:
    folder = tmp_path / "lookup-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: lookup-skill\ndescription: Looks keys up.\n---\nLook keys up.\n"
    )
    return load_skill(folder)


def executor(skill: Skill, model: TimedModel) -> AutonomousSkillExecutor:
    registry = ToolRegistry([lookup])
    config = AutonomousConfig(options=AgentOptions(iteration_timeout_s=LIMIT_S))
    return AutonomousSkillExecutor(skill, registry, ToolExecutor(registry), config, model=model)


async def test_each_iterations_model_call_gets_the_whole_limit(skill: Skill) -> None:
    """Four calls of CALL_S: more than the limit in all, each well within it."""
    replies = [action("a"), action("b"), action("c"), json.dumps({"final_answer": "done"})]
    model = TimedModel(replies)
    began = time.monotonic()
    result = await executor(skill, model).execute_sync("look a, b and c up")
    assert time.monotonic() - began > LIMIT_S
    assert (result.status, result.answer, model.calls) == ("completed", "done", 4)


async def test_a_call_over_the_limit_is_cancelled_and_stops_the_run(skill: Skill) -> None:
    model = TimedModel([action("a")], hang_on=2)
    events = [e async for e in executor(skill, model).execute("look a up", task_id="t")]
    ended = time.monotonic()
    assert model.cancelled  # cut as asyncio.timeout cuts: the call does not go on
    assert model.hung_at is not None and LIMIT_S <= ended - model.hung_at < STOP_BOUND_S
    done = events[-1]
    assert isinstance(done, TaskDoneEvent)
    assert (done.final_state, done.reason) == ("stopped", "iteration_timeout")
    assert model.calls == 2  # the limit stops the run: no call after the one cut
