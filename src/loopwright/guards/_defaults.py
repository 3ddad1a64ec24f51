"""Guardrail defaults that depend on a run's tools (seed 003).

- Wall clock: 30 minutes for a run with a tool that changes things (effect `write`,
  `destructive`, or `unknown`: undeclared, it may), 10 minutes for the rest.
- No progress: a run with a tool that modifies files (effect `write` and a ToolContext to
  record its writes with) is measured by file modifications; the others by new
  observations.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, Protocol

WALL_CLOCK_CHANGING_S = 1800.0
"""Seed 003 (PIPE-02): 30 minutes for agentic runs, those that change things."""
WALL_CLOCK_READ_ONLY_S = 600.0
"""Seed 003 (PIPE-02): 10 minutes for the rest."""
CHANGING_EFFECTS = frozenset({"write", "destructive", "unknown"})

ProgressSignal = Literal["files", "observations"]


class DeclaredTool(Protocol):
    @property
    def effect(self) -> str: ...

    @property
    def context_param(self) -> str | None: ...


def changes_things(tools: Iterable[DeclaredTool]) -> bool:
    """Does the run have a tool that may change something?"""
    return any(t.effect in CHANGING_EFFECTS for t in tools)


def default_wall_clock(tools: Iterable[DeclaredTool]) -> float:
    """The wall clock of a run that sets none: 30 min if it may change things, else 10."""
    return WALL_CLOCK_CHANGING_S if changes_things(tools) else WALL_CLOCK_READ_ONLY_S


def file_tools(tools: Iterable[DeclaredTool]) -> list[str]:
    """Names of the tools that modify workspace files (and record it in the ToolContext)."""
    return [str(getattr(t, "name", "?")) for t in tools if t.effect == "write" and t.context_param]


def progress_signal(tools: Iterable[DeclaredTool]) -> ProgressSignal:
    """What counts as progress for the no-progress stop: file modifications when the run
    can modify files, new observations otherwise."""
    return "files" if file_tools(tools) else "observations"
