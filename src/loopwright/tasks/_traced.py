"""A task run inside an OpenTelemetry `task {name}` span, its effects traced.

Used only when telemetry is on (loopwright.telemetry); this module imports OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from loopwright.effects import Effects, TracedEffects
from loopwright.tasks._models import TaskRunState
from loopwright.tasks._spec import TaskPlan
from loopwright.telemetry import Tracing
from loopwright.telemetry._otel import failed


async def traced_task_run(
    plan: TaskPlan,
    fx: Effects,
    tracing: Tracing,
    run: Callable[[TaskPlan, Effects], Awaitable[TaskRunState]],
) -> TaskRunState:
    """A task run inside a `task {name}` span, its effects (tool steps, agent steps as
    `execute_tool agent`, whose agent runs are their children) traced."""
    attributes: dict[str, Any] = {
        "loopwright.run_id": fx.log.run_id,
        "loopwright.task.name": plan.task.name,
        "loopwright.tenant": plan.spec.tenant,
    }
    scrubber = fx.log.scrubber
    with tracing.span(f"task {plan.task.name}", attributes, scrubber) as span:
        state = await run(plan, TracedEffects(fx, tracing))
        span.set_attribute("loopwright.status", state.status)
        if not state.success:
            failed(span, scrubber, f"task_{state.status}", state.summary or state.status)
        return state
