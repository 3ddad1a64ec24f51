"""ReplayEffects: serve effects from a run's recorded log, then go on live.

On resume (and `runs replay`) the loop runs again from the start. Model replies, tool
results and gate decisions already in the log are served from it, so nothing that
completed is repeated. A tool call that started but has no recorded result is run again
only if its tool is declared idempotent; otherwise the model is told its effect is
unknown. A gate that was waiting is asked again; a decided one is not.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from loopwright.effects._log import EventLog
from loopwright.effects._protocol import (
    Effects,
    GateRequest,
    GateVerdict,
    ToolInvocation,
    Verification,
    VerificationResult,
)
from loopwright.events import (
    Event,
    GateDecided,
    ModelResponded,
    ToolCallFinished,
    ToolCallStarted,
    VerificationFinished,
)
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model

INTERRUPTED = (
    "The call to '{name}' was interrupted before it finished (the process stopped). "
    "Its effect is unknown: check the current state before retrying."
)


@dataclass
class Recording:
    """The effects an earlier process of the run already made, by kind."""

    events: list[Event]
    model_responses: deque[ModelResponse] = field(default_factory=deque)
    tool_results: dict[str, ToolResult] = field(default_factory=dict)
    started_tools: set[str] = field(default_factory=set)
    gate_verdicts: dict[str, GateVerdict] = field(default_factory=dict)
    verification: VerificationFinished | None = None

    @classmethod
    def of(cls, events: Sequence[Event]) -> Recording:
        recording = cls(events=list(events))
        for event in events:
            recording._take(event)
        return recording

    def _take(self, event: Event) -> None:
        if isinstance(event, ModelResponded):
            self.model_responses.append(ModelResponse.from_dict(event.response))
        elif isinstance(event, ToolCallStarted):
            self.started_tools.add(event.call_id)
        elif isinstance(event, ToolCallFinished):
            self.tool_results[event.call_id] = ToolResult(
                event.call_id,
                event.tool_name,
                event.result,
                event.is_error,
                event.duration_ms,
                event.truncated,
                event.redactions,
            )
        elif isinstance(event, GateDecided):
            outcome = "approved" if event.approved else "rejected"
            if event.decided_by == "timeout":
                outcome = "timed_out"
            self.gate_verdicts[event.request_id] = GateVerdict(outcome, event.decided_by)
        elif isinstance(event, VerificationFinished):
            self.verification = event


class ReplayEffects:
    """Recorded results first; `live` for whatever the recording does not hold."""

    def __init__(self, recording: Recording, live: Effects) -> None:
        self.recording = recording
        self.live = live

    @property
    def log(self) -> EventLog:
        return self.live.log

    def monotonic(self) -> float:
        return self.live.monotonic()

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        if self.recording.model_responses:
            return self.recording.model_responses.popleft()
        return await self.live.call_model(model, request, timeout)

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        recording = self.recording
        result = recording.tool_results.get(call.id)
        if result is not None:
            return result
        if call.id in recording.started_tools and not idempotent:
            return ToolResult(call.id, call.name, INTERRUPTED.format(name=call.name), True)
        return await self.live.call_tool(call, invoke, idempotent=idempotent, timeout=timeout)

    async def gate(self, request: GateRequest) -> GateVerdict:
        verdict = self.recording.gate_verdicts.get(request.request_id)
        if verdict is not None:
            return verdict
        return await self.live.gate(request)

    async def verify(self, check: Verification) -> VerificationResult:
        """The recorded outcome (a replayed run that had finished), else a live check."""
        event = self.recording.verification
        if event is None:
            return await self.live.verify(check)
        return VerificationResult(
            event.outcome, tuple(event.passed), tuple(event.failed), event.output
        )
