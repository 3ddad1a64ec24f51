"""Seed 000 (AutonomousSkillExecutor core ReAct loop): its own four tests, changed only in
imports and mocks (the LLM is a ScriptedModel, the skill a real SKILL.md folder, the
registry and the tool executor real), then the contract of issue 21 line by line."""

# mypy: allow-untyped-defs
# (the seed's own tests keep their unannotated signatures; their bodies are checked)

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.compat import (
    AutonomousConfig,
    AutonomousSkillExecutor,
    ExecutionResult,
    TaskDoneEvent,
    TaskErrorEvent,
    TaskEvent,
    TaskMessageEvent,
    TaskStatusEvent,
)
from loopwright.skills import Skill, load_skill
from loopwright.testing import ScriptedModel
from loopwright.tools import ToolExecutor, ToolRegistry, tool

SEED_EVENTS = (TaskStatusEvent, TaskMessageEvent, TaskErrorEvent, TaskDoneEvent)


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def action(key: str) -> str:
    return json.dumps(
        {
            "thought": f"look up {key}",
            "action": "lookup",
            "action_input": {"key": key},
            "is_final": False,
        }
    )


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer, "is_final": True})


@pytest.fixture
def mock_skill(tmp_path: Path) -> Skill:
    folder = tmp_path / "lookup-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: lookup-skill\ndescription: Looks keys up.\n---\nLook up what the user asks.\n",
        encoding="utf-8",
    )
    return load_skill(folder)


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([lookup])


@pytest.fixture
def tool_executor(registry: ToolRegistry) -> ToolExecutor:
    return ToolExecutor(registry)


def llm(*replies: str) -> ScriptedModel:
    return ScriptedModel(list(replies))


# --- the seed's own tests (mock LLM -> ScriptedModel, given as model=) ----------------------
async def test_execute_returns_events(mock_skill, registry, tool_executor):
    """Execute should yield TaskEvent instances."""
    executor = AutonomousSkillExecutor(mock_skill, registry, tool_executor, model=llm(final("hi")))
    events = [e async for e in executor.execute("test request")]
    assert len(events) > 0
    assert isinstance(events[0], TaskStatusEvent)


async def test_execute_respects_max_iterations(mock_skill, registry, tool_executor):
    """Execute should stop at max_iterations."""
    config = AutonomousConfig(max_iterations=3)
    # Mock LLM to never return final answer
    model = llm(action("a"), action("b"), action("c"))
    executor = AutonomousSkillExecutor(mock_skill, registry, tool_executor, config, model=model)
    events = [e async for e in executor.execute("test")]
    # Should have exactly 3 iteration attempts
    iterations = [e for e in events if isinstance(e, TaskMessageEvent) and e.kind == "iteration"]
    assert len(iterations) == 3
    assert len(model.requests) == 3
    assert isinstance(events[-1], TaskDoneEvent) and events[-1].reason == "max_iterations"


async def test_execute_stops_on_final_answer(mock_skill, registry, tool_executor):
    """Execute should stop when LLM returns final answer."""
    # Mock LLM to return final answer on iteration 2
    model = llm(action("a"), final("the value of a"))
    executor = AutonomousSkillExecutor(mock_skill, registry, tool_executor, model=model)
    events = [e async for e in executor.execute("test")]
    # Verify loop terminated early
    iterations = [e for e in events if isinstance(e, TaskMessageEvent) and e.kind == "iteration"]
    assert len(iterations) == 2 < executor.config.max_iterations
    assert isinstance(events[-1], TaskDoneEvent)
    assert (events[-1].final_state, events[-1].result) == ("completed", "the value of a")


async def test_execute_sync_returns_result(mock_skill, registry, tool_executor):
    """execute_sync should return ExecutionResult."""
    executor = AutonomousSkillExecutor(mock_skill, registry, tool_executor, model=llm(final("ok")))
    result = await executor.execute_sync("test")
    assert isinstance(result, ExecutionResult)
    assert result.success in [True, False]


# --- the contract, line by line -------------------------------------------------------------
async def test_execute_yields_only_the_four_classes_first_status_last_done(
    mock_skill: Skill, registry: ToolRegistry
) -> None:
    model = llm(action("a"), "", final("done"))
    events = [
        e
        async for e in AutonomousSkillExecutor(mock_skill, registry, model=model).execute(
            "go", task_id="t-7"
        )
    ]
    assert all(type(e) in SEED_EVENTS for e in events)
    assert isinstance(events[0], TaskStatusEvent) and events[0].state == "running"
    assert isinstance(events[-1], TaskDoneEvent)
    assert sum(isinstance(e, TaskDoneEvent) for e in events) == 1
    assert {e.task_id for e in events} == {"t-7"}
    kinds = [e.kind for e in events if isinstance(e, TaskMessageEvent)]
    assert kinds[:4] == ["iteration", "thought", "tool_call", "tool_result"]
    assert [e.error_code for e in events if isinstance(e, TaskErrorEvent)] == ["parse_error"]
    results = [
        e.message for e in events if isinstance(e, TaskMessageEvent) and e.kind == "tool_result"
    ]
    assert results == ["lookup: value of a"]


async def test_errors_become_task_error_events(mock_skill: Skill, registry: ToolRegistry) -> None:
    bad_call = json.dumps({"action": "lookup", "action_input": {"nope": 1}})
    model = llm(bad_call, final("gave up"))
    events = [
        e async for e in AutonomousSkillExecutor(mock_skill, registry, model=model).execute("go")
    ]
    errors = [e for e in events if isinstance(e, TaskErrorEvent)]
    assert [e.error_code for e in errors] == ["tool_error"]
    assert "missing required argument 'key'" in errors[0].message


async def test_a_failure_before_the_run_still_ends_with_done(
    mock_skill: Skill, registry: ToolRegistry
) -> None:
    config = AutonomousConfig(model="nosuchprovider:x")
    events = [
        e async for e in AutonomousSkillExecutor(mock_skill, registry, config=config).execute("go")
    ]
    assert [type(e) for e in events] == [TaskStatusEvent, TaskErrorEvent, TaskDoneEvent]
    assert "unknown model provider" in events[1].message  # type: ignore[attr-defined]
    assert events[-1].final_state == "failed"  # type: ignore[attr-defined]


async def test_execution_result_has_success_and_iterations(
    mock_skill: Skill, registry: ToolRegistry
) -> None:
    model = llm(action("a"), action("b"), final("both"))
    result = await AutonomousSkillExecutor(mock_skill, registry, model=model).execute_sync("go")
    assert result.success is True
    assert result.iterations == 3
    stopped = await AutonomousSkillExecutor(
        mock_skill, registry, config=AutonomousConfig(max_iterations=1), model=llm(action("a"))
    ).execute_sync("go")
    assert (stopped.success, stopped.iterations, stopped.reason) == (False, 1, "max_iterations")


def test_every_event_is_a_task_event() -> None:
    assert all(issubclass(cls, TaskEvent) for cls in SEED_EVENTS)
