"""Helpers for the store tests: real agent runs with a ScriptedModel, recorded as events."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from loopwright.events import Event
from loopwright.runtime import RunSpec, Runtime
from loopwright.testing import ScriptedModel

TOOLS_FILE = Path(__file__).parent / "crash_tools.py"


def line_script(path: Path, count: int, tool: str = "append_line") -> list[str]:
    """Replies that call `tool` `count` times (one line each), then answer."""
    replies = [
        json.dumps(
            {
                "thought": f"write line {i}",
                "action": tool,
                "action_input": {"path": str(path), "text": f"line {i}"},
            }
        )
        for i in range(1, count + 1)
    ]
    return [*replies, json.dumps({"thought": "all written", "final_answer": f"{count} lines"})]


def write_script(folder: Path, replies: list[str]) -> Path:
    script = folder / "script.json"
    script.write_text(json.dumps(replies))
    return script


def line_spec(folder: Path, count: int, tool: str = "append_line") -> RunSpec:
    """A RunSpec whose scripted model writes `count` lines to folder/lines.txt."""
    script = write_script(folder, line_script(folder / "lines.txt", count, tool))
    return RunSpec(
        request=f"write {count} lines",
        model=f"scripted:{script}",
        tools=(f"{TOOLS_FILE}:{tool}",),
        workspace=str(folder),
        options=_options(count),
    )


def _options(count: int) -> Any:
    from loopwright.agent import AgentOptions

    return AgentOptions(max_iterations=count + 2, no_progress_limit=count + 2)


def recorded_run(spec: RunSpec, *, run_id: str = "run_test") -> list[Event]:
    """Every event of a full run of `spec` (not stored anywhere)."""
    events: list[Event] = []

    async def keep(event: Event) -> None:
        events.append(event)

    async def run() -> Any:
        runtime = Runtime()  # an in-memory store: the events are what the test keeps
        try:
            return await runtime.start(spec, run_id=run_id, on_event=keep).wait()
        finally:
            runtime.close()

    result = asyncio.run(run())
    assert result.success, result
    return events


def scripted(replies: list[str]) -> ScriptedModel:
    return ScriptedModel(replies)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []
