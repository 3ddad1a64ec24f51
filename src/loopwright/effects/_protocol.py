"""The `Effects` protocol and the values that cross it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from loopwright.effects._log import EventLog
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model
from loopwright.run_context import Gatekeeper, GateRequest, GateVerdict

__all__ = [
    "Effects",
    "GateRequest",
    "GateVerdict",
    "Gatekeeper",
    "ToolInvocation",
    "Verification",
    "VerificationResult",
]


@dataclass(frozen=True)
class VerificationResult:
    """The outcome of checking a run's work (e.g. the project's tests) at its end."""

    outcome: Literal["pass", "partial_pass", "fail"]
    passed: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    output: str = ""


ToolInvocation = Callable[[ToolCall], Awaitable[ToolResult]]
Verification = Callable[[], Awaitable[VerificationResult]]


class Effects(Protocol):
    """Everything that touches the world, for one run; each result lands in `log`.

    The loops are written against this protocol only. Implementations: LiveEffects
    (in-process), ReplayEffects (from a recorded log, then live), and the Temporal engine.
    """

    @property
    def log(self) -> EventLog: ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin, for deadlines and durations."""
        ...

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse: ...

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        """Run one tool call. Its `tool_call_started` event is durable before a tool that is
        not idempotent runs, so a crash can never make it run twice unknowingly."""
        ...

    async def gate(self, request: GateRequest) -> GateVerdict: ...

    async def verify(self, check: Verification) -> VerificationResult: ...
