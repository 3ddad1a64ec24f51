"""Choosing a task for a free-text request by its `trigger_keywords`, with the reason."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from loopwright.errors import TaskMatchError
from loopwright.tasks._models import TaskDefinition


@dataclass(frozen=True)
class TaskMatch:
    task: TaskDefinition
    matched: tuple[str, ...]

    @property
    def explanation(self) -> str:
        words = ", ".join(repr(k) for k in self.matched)
        return f"chose task {self.task.name!r}: the request mentions {words}"


def _mentions(text: str, keyword: str) -> bool:
    words = [re.escape(w) for w in keyword.lower().split()]
    return bool(words) and re.search(r"\b" + r"\s+".join(words) + r"\b", text) is not None


def keyword_hits(text: str, task: TaskDefinition) -> tuple[str, ...]:
    lowered = text.lower()
    return tuple(k for k in task.trigger_keywords if _mentions(lowered, k))


def choose_task(text: str, tasks: Sequence[TaskDefinition]) -> TaskMatch:
    """The task whose keywords the request mentions most; no match or a tie is an error."""
    scored = sorted(
        (TaskMatch(task, keyword_hits(text, task)) for task in tasks),
        key=lambda m: len(m.matched),
        reverse=True,
    )
    if not scored or not scored[0].matched:
        known = "; ".join(
            f"{t.name}: {', '.join(t.trigger_keywords) or '(no keywords)'}" for t in tasks
        )
        raise TaskMatchError(f"no task matches {text!r} (trigger keywords: {known or 'none'})")
    best = [m for m in scored if len(m.matched) == len(scored[0].matched)]
    if len(best) > 1:
        detail = "; ".join(f"{m.task.name} ({', '.join(m.matched)})" for m in best)
        raise TaskMatchError(
            f"{text!r} matches {len(best)} tasks equally well: {detail}; "
            "name the task file or use more specific words"
        )
    return scored[0]
