"""Helpers for task tests: tools that touch real files in tmp_path, and task file writers."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from loopwright.errors import ToolError
from loopwright.events import Event
from loopwright.tasks import GateBroker, TaskExecutor, TaskSettings, load_task
from loopwright.tasks._loader import LoadedTask
from loopwright.tools import Tool, ToolContext, resolve_in_workspace, tool


@tool(effect="read")
def count_lines(ctx: ToolContext, path: str) -> dict[str, Any]:
    """Count the lines of a file.

    Args:
        path: file in the workspace
    """
    text = resolve_in_workspace(ctx.workspace, path, must_exist=True).read_text()
    return {"path": path, "lines": len(text.splitlines()), "words": text.split()}


@tool(effect="write")
def write_text(ctx: ToolContext, path: str, content: str) -> str:
    """Write a file.

    Args:
        path: file in the workspace
        content: text
    """
    resolve_in_workspace(ctx.workspace, path).write_text(content)
    return "ok"


@tool(effect="write")
def explode(path: str) -> str:
    """A write tool that always fails.

    Args:
        path: file it claims to write
    """
    raise ToolError(f"cannot write {path}: disk on fire")


@tool(effect="read")
def fail_check() -> str:
    """A read tool that always fails."""
    raise ToolError("the check failed")


@tool(effect="read")
def shout(text: str) -> str:
    """Upper-case a text.

    Args:
        text: the text
    """
    return text.upper()


TEST_TOOLS: list[Tool] = [count_lines, write_text, explode, fail_check, shout]


def write_task(folder: Path, text: str, name: str = "task.yaml") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def load(folder: Path, text: str, name: str = "task.yaml") -> LoadedTask:
    return load_task(write_task(folder, text, name), TEST_TOOLS)


class Recorder:
    """A sink that keeps every event it is sent."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def __call__(self, event: Event) -> None:
        self.events.append(event)


def make_executor(
    loaded: LoadedTask, workspace: Path, *, model: Any = None, **settings: Any
) -> tuple[TaskExecutor, Recorder, GateBroker]:
    sink = Recorder()
    gates = GateBroker()
    options = TaskSettings(workspace=workspace, state_root=workspace.parent / "state", **settings)
    executor = TaskExecutor.for_task(loaded, model, settings=options, sink=sink, gates=gates)
    return executor, sink, gates
