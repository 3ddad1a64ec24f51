"""An agent run inside an OpenTelemetry `invoke_agent` span, its effects traced.

Used only when telemetry is on (loopwright.telemetry); this module imports OpenTelemetry.
"""

from __future__ import annotations

from typing import Any

from loopwright.agent._loop import run_agent
from loopwright.agent._result import ExecutionResult
from loopwright.agent._setup import RunSetup
from loopwright.effects import Effects, TracedEffects
from loopwright.telemetry import Tracing
from loopwright.telemetry._otel import failed, provider_and_model


async def traced_agent_run(setup: RunSetup, fx: Effects, tracing: Tracing) -> ExecutionResult:
    """`run_agent` inside an `invoke_agent` span, its effects traced."""
    provider, name = provider_and_model(setup.model.name)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "loopwright",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": name,
        "gen_ai.conversation.id": setup.run_id,
        "loopwright.run_id": setup.run_id,
        "loopwright.parent_run_id": setup.parent_run_id,
        "loopwright.tenant": setup.tenant,
    }
    scrubber = fx.log.scrubber
    with tracing.span("invoke_agent loopwright", attributes, scrubber) as span:
        result = await run_agent(setup, TracedEffects(fx, tracing))
        span.set_attribute("gen_ai.usage.input_tokens", result.usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", result.usage.output_tokens)
        span.set_attribute("loopwright.status", result.status)
        if result.reason:
            span.set_attribute("loopwright.reason", result.reason)
        if not result.success and result.status != "waiting":  # waiting is not a failure
            failed(span, scrubber, result.reason or result.status, result.message or "")
        return result
