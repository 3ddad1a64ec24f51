"""Run an evaluation suite against a model; report per task and overall."""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.evals._suite import EvalSuite, EvalTask
from loopwright.events import Event, ModelResponseEvent
from loopwright.messages import Usage
from loopwright.models import Model


@dataclass(frozen=True)
class TaskOutcome:
    id: str
    level: int
    passed: bool
    problems: list[str]
    iterations: int
    tool_calls: list[str]
    input_tokens: int
    output_tokens: int
    wall_s: float
    answer: str | None
    prompt_tokens: list[int] = field(default_factory=list)
    """Per model call: the prompt's tokens."""
    prompt_tokens_evaluated: list[int] = field(default_factory=list)
    """Per model call: the prompt tokens the model ran through (the rest came from the
    provider's prompt cache; equal to `prompt_tokens` when the provider does not say)."""
    model_s: float = 0.0
    """Seconds spent waiting for the model (of `wall_s`)."""


@dataclass(frozen=True)
class EvalReport:
    model: str
    outcomes: list[TaskOutcome]

    @property
    def success_rate(self) -> float:
        return sum(o.passed for o in self.outcomes) / len(self.outcomes) if self.outcomes else 0.0

    def by_level(self) -> dict[int, tuple[int, int]]:
        levels: dict[int, tuple[int, int]] = {}
        for o in self.outcomes:
            passed, total = levels.get(o.level, (0, 0))
            levels[o.level] = (passed + o.passed, total + 1)
        return dict(sorted(levels.items()))

    def per_task(self) -> dict[str, float]:
        """Means per task: seconds (wall and in the model), tokens, and prompt tokens
        evaluated against prompt tokens in all (the rest came from the prompt cache)."""
        count = len(self.outcomes) or 1
        prompt = sum(sum(o.prompt_tokens) for o in self.outcomes)
        evaluated = sum(sum(o.prompt_tokens_evaluated) for o in self.outcomes)
        output = sum(o.output_tokens for o in self.outcomes)
        model_s = sum(o.model_s for o in self.outcomes)
        return {
            "wall_s": sum(o.wall_s for o in self.outcomes) / count,
            "model_s": model_s / count,
            "tokens": sum(o.input_tokens + o.output_tokens for o in self.outcomes) / count,
            "prompt_tokens": prompt / count,
            "prompt_tokens_evaluated": evaluated / count,
            "output_tokens": output / count,
            "output_tokens_per_model_s": output / model_s if model_s else 0.0,
        }

    def to_dict(self) -> dict[str, Any]:
        count = len(self.outcomes) or 1
        return {
            "model": self.model,
            "success_rate": self.success_rate,
            "mean_iterations": sum(o.iterations for o in self.outcomes) / count,
            "total_tokens": sum(o.input_tokens + o.output_tokens for o in self.outcomes),
            "wall_s": sum(o.wall_s for o in self.outcomes),
            "per_task": {k: round(v, 3) for k, v in self.per_task().items()},
            "by_level": {
                str(k): {"passed": p, "total": t} for k, (p, t) in self.by_level().items()
            },
            "tasks": [asdict(o) for o in self.outcomes],
        }

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")


async def run_task(
    task: EvalTask, suite: EvalSuite, model: Model, options: AgentOptions | None = None
) -> TaskOutcome:
    """One task in a fresh workspace; `options` (the task's step budget always wins) let a
    variant of the engine be measured on the same suite."""
    with tempfile.TemporaryDirectory(prefix=f"eval-{task.id}-") as tmp:
        workspace = Path(tmp)
        for name, text in task.files.items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_text(text, encoding="utf-8")
        options = dataclasses.replace(options or AgentOptions(), max_iterations=task.max_iterations)
        agent = AgentExecutor(model, suite.tools_for(task), options=options, workspace=workspace)
        calls = ModelCalls()
        started = time.perf_counter()
        result = await agent.run(task.request, on_event=calls.see)
        wall = time.perf_counter() - started
        problems = task.expect.failures(result, workspace)
    return TaskOutcome(
        id=task.id,
        level=task.level,
        passed=not problems,
        problems=problems,
        iterations=result.iterations,
        tool_calls=[s.tool_name for s in result.steps],
        input_tokens=result.usage.input_tokens,
        output_tokens=result.usage.output_tokens,
        wall_s=round(wall, 3),
        answer=result.answer,
        prompt_tokens=calls.prompt_tokens,
        prompt_tokens_evaluated=calls.evaluated,
        model_s=round(calls.model_s, 3),
    )


class ModelCalls:
    """Per model call of a run, from its `model_response` events: prompt tokens in all and
    evaluated (not from the prompt cache), and the seconds the calls took."""

    def __init__(self) -> None:
        self.prompt_tokens: list[int] = []
        self.evaluated: list[int] = []
        self.model_s = 0.0

    async def see(self, event: Event) -> None:
        if isinstance(event, ModelResponseEvent):
            usage = Usage.from_dict(event.response.get("usage") or {})
            self.prompt_tokens.append(usage.input_tokens)
            self.evaluated.append(usage.evaluated_input_tokens)
            self.model_s += event.duration_ms / 1000


async def run_suite(
    suite: EvalSuite,
    model_for_task: Callable[[EvalTask], Model],
    *,
    only: set[str] | None = None,
    on_outcome: Callable[[TaskOutcome], None] | None = None,
    options: AgentOptions | None = None,
) -> EvalReport:
    """Run the tasks one at a time (a local model serves one call at a time anyway)."""
    outcomes: list[TaskOutcome] = []
    name = ""
    for task in suite.tasks:
        if only and task.id not in only:
            continue
        model = model_for_task(task)
        name = model.name
        outcome = await run_task(task, suite, model, options)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return EvalReport(name, outcomes)
