"""TracedEffects: any Effects, with an OpenTelemetry span around each model and tool call.

It wraps whatever performs the effects (LiveEffects, ReplayEffects, the Temporal engine's
effects), so every engine is traced the same way. A call served from a recorded log is
traced too (`loopwright.replayed` is not known here: the span simply takes no time).
Built only when telemetry is enabled (loopwright.telemetry); this module imports
OpenTelemetry, so nothing imports it otherwise.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import SpanKind

from loopwright.effects._protocol import (
    Effects,
    ToolInvocation,
)
from loopwright.effects._wrapped import WrappedEffects
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model
from loopwright.telemetry import Tracing
from loopwright.telemetry._otel import failed, provider_and_model


class TracedEffects(WrappedEffects):
    """`inner`, each model call a `chat` span and each tool call an `execute_tool` span."""

    def __init__(self, inner: Effects, tracing: Tracing) -> None:
        super().__init__(inner)
        self.tracing = tracing

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        provider, name = provider_and_model(model.name)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": name,
            "gen_ai.request.temperature": request.temperature,
            "gen_ai.request.max_tokens": request.max_output_tokens,
        }
        scrubber = self.log.scrubber
        with self.tracing.span(f"chat {name}", attributes, scrubber, SpanKind.CLIENT) as span:
            response = await self.inner.call_model(model, request, timeout)
            span.set_attribute("gen_ai.response.model", response.model or name)
            span.set_attribute("gen_ai.usage.input_tokens", response.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", response.usage.output_tokens)
            if response.finish_reason:
                span.set_attribute("gen_ai.response.finish_reasons", [response.finish_reason])
            text = self.tracing.content(scrubber, response.text)
            if text is not None:
                span.set_attribute("gen_ai.output.messages", text)
            return response

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        scrubber = self.log.scrubber
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.arguments": self.tracing.content(scrubber, call.arguments),
            "loopwright.tool.idempotent": idempotent,
        }
        with self.tracing.span(f"execute_tool {call.name}", attributes, scrubber) as span:
            result = await self.inner.call_tool(
                call, invoke, idempotent=idempotent, timeout=timeout
            )
            content = self.tracing.content(scrubber, result.content)
            if content is not None:
                span.set_attribute("gen_ai.tool.call.result", content)
            if result.is_error:
                failed(span, scrubber, "tool_error", result.content[:200])
            return result
