"""Seed 004's rollback from the compat TaskExecutor (issue 34, item 10): `rollback()` walks
a run's change log newest first and calls `rollback_config` for each entry, which undoes it
through the safety layer's `execute_undo`.

Seed 004's lines held here:

- "21. State supports rollback: iterate `change_log` in reverse, call `rollback_config` for
  each entry"
- "32. Rollback uses `safety.execute_undo()` instead of custom change_log logic where possible"
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.compat import (
    ChangeEntry,
    Settings,
    StepDefinition,
    TaskDefinition,
    TaskExecutor,
)
from loopwright.errors import TaskRunError
from loopwright.safety.operations import UndoOutcome
from loopwright.tools import ToolContext, tool


@tool(effect="write")
def write_text(ctx: ToolContext, path: str, text: str) -> str:
    """Write a text file in the workspace."""
    (ctx.workspace / path).write_text(text, encoding="utf-8")
    return f"wrote {path}"


def task() -> TaskDefinition:
    steps = [
        StepDefinition("edit", "tool", "", "write_text", args={"path": "notes.txt", "text": "new"}),
        StepDefinition("add", "tool", "", "write_text", args={"path": "added.txt", "text": "x"}),
    ]
    return TaskDefinition("notes", "writer", ("notes",), "low", steps, {})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "notes.txt").write_text("original", encoding="utf-8")
    return folder


def executor_for(workspace: Path, kind: type[TaskExecutor] = TaskExecutor) -> TaskExecutor:
    settings = Settings(
        data_dir=workspace.parent / "data", tools=[write_text], workspace=workspace, auto_gate=False
    )
    return kind(None, settings)


async def run_task(executor: TaskExecutor) -> str:
    dicts = [d async for d in executor.execute(task(), "write notes", {}, "acme")]
    assert dicts[-1]["status"] == "completed"
    assert executor.task_id is not None
    return executor.task_id


async def test_rollback_undoes_the_change_log_newest_first_and_marks_the_state(
    workspace: Path,
) -> None:
    """Seed 004: "21. State supports rollback: iterate `change_log` in reverse, call
    `rollback_config` for each entry"; "32. Rollback uses `safety.execute_undo()`"."""
    executor = executor_for(workspace)
    task_id = await run_task(executor)
    assert (workspace / "notes.txt").read_text() == "new" and (workspace / "added.txt").exists()
    changes = executor.load_state("acme", task_id).change_log
    assert [c.action for c in changes] == ["modify", "create"]

    undo = [d async for d in executor.rollback(task_id, "acme")]
    assert undo[0] == {"type": "task_start", "task_name": "rollback:notes", "total_steps": 2}
    results = [d for d in undo if d["type"] == "function_result"]
    assert [r["success"] for r in results] == [True, True]
    assert "added.txt" in results[0]["result"] and "notes.txt" in results[1]["result"]
    assert undo[-1]["type"] == "task_complete" and undo[-1]["status"] == "completed"
    assert (workspace / "notes.txt").read_text() == "original"
    assert not (workspace / "added.txt").exists()
    state = json.loads(executor.state_path("acme", task_id).read_text(encoding="utf-8"))
    assert state["status"] == "rolled_back"
    with pytest.raises(TaskRunError, match="already rolled back"):
        [d async for d in executor.rollback(task_id, "acme")]


class RecordingExecutor(TaskExecutor):
    """Seed 004's extension point: its own `rollback_config` (a config restore, say)."""

    undone: list[ChangeEntry]

    def rollback_config(self, entry: ChangeEntry) -> UndoOutcome:
        self.__dict__.setdefault("undone", []).append(entry)
        if entry.action == "create":
            raise RuntimeError("cannot remove it")
        return super().rollback_config(entry)


async def test_rollback_calls_rollback_config_for_each_entry_in_reverse(
    workspace: Path,
) -> None:
    """Seed 004: "call `rollback_config` for each entry": an overriding `rollback_config`
    gets every entry, newest first; one that fails is reported, and the others are still
    undone (the state stays not rolled back)."""
    executor = executor_for(workspace, RecordingExecutor)
    task_id = await run_task(executor)
    undo: list[dict[str, Any]] = [d async for d in executor.rollback(task_id, "acme")]
    undone = executor.undone  # type: ignore[attr-defined]
    assert [e.action for e in undone] == ["create", "modify"]
    results = [d for d in undo if d["type"] == "function_result"]
    assert [r["success"] for r in results] == [False, True]
    assert "RuntimeError: cannot remove it" in results[0]["result"]
    assert undo[-1]["status"] == "failed"
    assert (workspace / "notes.txt").read_text() == "original"
    state = json.loads(executor.state_path("acme", task_id).read_text(encoding="utf-8"))
    assert state["status"] == "completed"


def test_rollback_config_undoes_one_entry(workspace: Path, tmp_path: Path) -> None:
    backup = tmp_path / "notes.bak"
    backup.write_text("from backup", encoding="utf-8")
    entry = ChangeEntry("modify", "file", str(workspace / "notes.txt"), str(backup), 0.0)
    outcome = executor_for(workspace).rollback_config(entry)
    assert outcome.ok and (workspace / "notes.txt").read_text() == "from backup"
