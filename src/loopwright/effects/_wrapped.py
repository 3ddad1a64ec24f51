"""WrappedEffects: Effects that hand every call to an inner Effects.

ReplayEffects (recorded results first) and TracedEffects (a span around each call) are
wrappers: each overrides only what it changes.
"""

from __future__ import annotations

from loopwright.effects._log import EventLog
from loopwright.effects._protocol import (
    Effects,
    GateRequest,
    GateVerdict,
    ToolInvocation,
    Verification,
    VerificationResult,
)
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model


class WrappedEffects:
    """Every effect passed to `inner` as it is."""

    def __init__(self, inner: Effects) -> None:
        self.inner = inner

    @property
    def log(self) -> EventLog:
        return self.inner.log

    def monotonic(self) -> float:
        return self.inner.monotonic()

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        return await self.inner.call_model(model, request, timeout)

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        return await self.inner.call_tool(call, invoke, idempotent=idempotent, timeout=timeout)

    async def gate(self, request: GateRequest) -> GateVerdict:
        return await self.inner.gate(request)

    async def verify(self, check: Verification) -> VerificationResult:
        return await self.inner.verify(check)
