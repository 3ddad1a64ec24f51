"""Guardrail defaults that depend on a run's tools (seed 003).

- Wall clock (seed 003: "30min agentic, 10min simple"): 30 minutes for an agentic run (one
  offered any tool), 10 minutes for a simple one (no tool: a model call or a few).
- No progress: a run with a tool that modifies files (effect `write` and a ToolContext to
  record its writes with) is measured by file modifications; the others by new
  observations.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, Protocol

WALL_CLOCK_AGENTIC_S = 1800.0
"""Seed 003 (PIPE-02): 30 minutes for an agentic run (it has tools)."""
WALL_CLOCK_SIMPLE_S = 600.0
"""Seed 003 (PIPE-02): 10 minutes for a simple run (no tools)."""
WALL_CLOCK_DEFAULT = "1800 (30 min) for a run with tools, 600 (10 min) for a run without"
"""The rule in words, as `--help`, the config reference and the docs say it."""

ProgressSignal = Literal["files", "observations"]


class DeclaredTool(Protocol):
    @property
    def effect(self) -> str: ...

    @property
    def context_param(self) -> str | None: ...


def default_wall_clock(tools: Iterable[DeclaredTool], *, any_tool: bool = True) -> float:
    """The wall clock of a run that sets none: 30 min with tools (agentic), else 10.
    `any_tool=False` (runs recorded with RunSpec 1 to 3): 30 min only with a tool that may
    change things (effect `write`, `destructive` or undeclared)."""
    if any_tool:
        agentic = any(True for _ in tools)
    else:
        agentic = any(t.effect in ("write", "destructive", "unknown") for t in tools)
    return WALL_CLOCK_AGENTIC_S if agentic else WALL_CLOCK_SIMPLE_S


def file_tools(tools: Iterable[DeclaredTool]) -> list[str]:
    """Names of the tools that modify workspace files (and record it in the ToolContext)."""
    return [str(getattr(t, "name", "?")) for t in tools if t.effect == "write" and t.context_param]


def progress_signal(tools: Iterable[DeclaredTool]) -> ProgressSignal:
    """What counts as progress for the no-progress stop: file modifications when the run
    can modify files, new observations otherwise."""
    return "files" if file_tools(tools) else "observations"
