"""Seed 000's executor handles a model that fails with any exception (issue 34, item 7): a
RuntimeError in a custom model becomes the seed's error and done events, not a traceback.

Seed 000's lines held here:

- "- [ ] Handles LLM call failures gracefully"
- "- `TaskErrorEvent` - Errors encountered"
- "- `TaskDoneEvent` - Completion (success/failure)"
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest

from loopwright.compat import (
    AutonomousSkillExecutor,
    TaskDoneEvent,
    TaskErrorEvent,
    TaskEvent,
    TaskMessageEvent,
    TaskStatusEvent,
)
from loopwright.messages import ModelRequest, ModelResponse
from loopwright.skills import Skill, load_skill
from loopwright.tools import ToolExecutor, ToolRegistry, tool

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@tool(effect="read")
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


class FlakyModel:
    """A custom model (not a loopwright adapter): its first reply calls `lookup`, its
    second call raises a RuntimeError, as a bug in user code would."""

    name = "custom:flaky"
    preferred_tool_mode: Literal["prompted"] = "prompted"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls == 1:
            action = {"thought": "look", "action": "lookup", "action_input": {"key": "k"}}
            return ModelResponse(text=json.dumps(action))
        raise RuntimeError(f"backend crashed while holding {TOKEN}")


@pytest.fixture
def skill(tmp_path: Path) -> Skill:
    folder = tmp_path / "lookup-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: lookup-skill\ndescription: Looks keys up.\n---\nLook up keys.\n",
        encoding="utf-8",
    )
    return load_skill(folder)


async def test_a_runtime_error_in_a_custom_model_is_an_error_event_then_done(
    skill: Skill,
) -> None:
    """Seed 000: "Handles LLM call failures gracefully". The stream goes on to the seed's
    `TaskErrorEvent` (the exception's class as the code, its text scrubbed) and ends with a
    failed `TaskDoneEvent`; nothing escapes `execute()`."""
    registry = ToolRegistry([lookup])
    model = FlakyModel()
    executor = AutonomousSkillExecutor(skill, registry, ToolExecutor(registry), model=model)
    events: list[TaskEvent] = [e async for e in executor.execute("look k up", task_id="t1")]
    assert model.calls == 2
    assert isinstance(events[0], TaskStatusEvent) and events[0].state == "running"
    assert any(isinstance(e, TaskMessageEvent) and e.kind == "tool_result" for e in events)
    error, done = events[-2], events[-1]
    assert isinstance(error, TaskErrorEvent) and error.error_code == "RuntimeError"
    assert "backend crashed" in error.message and TOKEN not in error.message
    assert isinstance(done, TaskDoneEvent)
    assert (done.task_id, done.final_state, done.reason) == ("t1", "failed", "error")
