"""ReplayEffects: serve effects from a run's recorded log, then go on live.

On resume (and `runs replay`) the loop runs again from the start. Model replies, tool
results and gate decisions already in the log are served from it, so nothing that
completed is repeated. A tool call that started but has no recorded result is run again
only if its tool is declared idempotent; otherwise the model is told its effect is
unknown. A gate that was waiting is asked again; a decided one is not.

Task runs record their effects with the task events: a tool step's `tool_call_started` is
answered by the `function_result` after it, and a step's `change_recorded` events are the
result of the backup taken before it (call id `backup_call_id(run_id, step)`); a gate
whose step completed `timed_out` timed out.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loopwright.effects._protocol import (
    Effects,
    GateRequest,
    GateVerdict,
    ToolInvocation,
    Verification,
    VerificationResult,
)
from loopwright.effects._wrapped import WrappedEffects
from loopwright.events import (
    ChangeRecordedEvent,
    ConfirmationRequiredEvent,
    Event,
    FunctionResultEvent,
    GateDecisionEvent,
    ModelResponseEvent,
    StepCompleteEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
    VerificationEvent,
)
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model

INTERRUPTED = (
    "The call to '{name}' was interrupted before it finished (the process stopped). "
    "Its effect is unknown: check the current state before retrying."
)


def backup_call_id(run_id: str, step: str) -> str:
    """The call id of the backup a task step takes before it changes something."""
    return f"{run_id}:{step}:backup"


@dataclass
class Recording:
    """The effects an earlier process of the run already made, by kind."""

    events: list[Event]
    model_responses: deque[ModelResponse] = field(default_factory=deque)
    tool_results: dict[str, ToolResult] = field(default_factory=dict)
    started_tools: set[str] = field(default_factory=set)
    gate_verdicts: dict[str, GateVerdict] = field(default_factory=dict)
    verification: VerificationEvent | None = None
    _open_call: ToolCallStartedEvent | None = None
    """The latest tool call without a result yet (a task step's function_result answers it)."""
    _backups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _gates_by_step: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, events: Sequence[Event]) -> Recording:
        recording = cls(events=list(events))
        for event in events:
            recording._take(event)
        return recording

    def _take(self, event: Event) -> None:
        if isinstance(event, ModelResponseEvent):
            self.model_responses.append(ModelResponse.from_dict(event.response))
        elif isinstance(event, ToolCallStartedEvent):
            self.started_tools.add(event.call_id)
            self._open_call = event
        elif isinstance(event, FunctionResultEvent):
            self._take_function_result(event)
        elif isinstance(event, ChangeRecordedEvent):
            self._take_change(event)
        elif isinstance(event, ConfirmationRequiredEvent):
            self._gates_by_step[event.step] = event.request_id
        elif isinstance(event, StepCompleteEvent) and event.status == "timed_out":
            request_id = self._gates_by_step.get(event.step)
            if request_id is not None and request_id not in self.gate_verdicts:
                self.gate_verdicts[request_id] = GateVerdict("timed_out", "timeout")
        elif isinstance(event, ToolCallEvent):
            self._open_call = None
            self.tool_results[event.call_id] = ToolResult(
                event.call_id,
                event.tool_name,
                event.result,
                event.is_error,
                event.duration_ms,
                event.truncated,
                event.redactions,
            )
        elif isinstance(event, GateDecisionEvent):
            outcome = "approved" if event.approved else "rejected"
            if event.decided_by == "timeout":
                outcome = "timed_out"
            self.gate_verdicts[event.request_id] = GateVerdict(
                outcome, event.decided_by, event.reason
            )
        elif isinstance(event, VerificationEvent):
            self.verification = event

    def _take_function_result(self, event: FunctionResultEvent) -> None:
        call = self._open_call
        if call is None or call.tool_name != event.function:
            return  # not a tool step's result (an undo, say)
        self._open_call = None
        # the step's value as JSON: the task runner reads it back with json.loads
        content = json.dumps(event.result) if event.success else str(event.error or "")
        self.tool_results[call.call_id] = ToolResult(
            call.call_id, call.tool_name, content, not event.success
        )

    def _take_change(self, event: ChangeRecordedEvent) -> None:
        call_id = backup_call_id(event.run_id, event.step)
        entries = self._backups.setdefault(call_id, [])
        entries.append(
            {
                "action": event.action,
                "resource_type": event.resource_type,
                "resource_id": event.resource_id,
                "backup_path": event.backup_path,
                "timestamp": event.ts,
                "step": event.step,
            }
        )
        self.tool_results[call_id] = ToolResult(call_id, "backup", json.dumps(entries))


class ReplayEffects(WrappedEffects):
    """Recorded results first; the live effects (`inner`) for what the recording does not
    hold."""

    def __init__(self, recording: Recording, live: Effects) -> None:
        super().__init__(live)
        self.recording = recording

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        if self.recording.model_responses:
            return self.recording.model_responses.popleft()
        return await self.inner.call_model(model, request, timeout)

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        recording = self.recording
        result = recording.tool_results.get(call.id)
        if result is not None:
            return result
        if call.id in recording.started_tools and not idempotent:
            return ToolResult(call.id, call.name, INTERRUPTED.format(name=call.name), True)
        return await self.inner.call_tool(call, invoke, idempotent=idempotent, timeout=timeout)

    async def gate(self, request: GateRequest) -> GateVerdict:
        verdict = served_verdict(self.recording.gate_verdicts, request.request_id)
        if verdict is not None:
            return verdict
        return await self.inner.gate(request)

    async def verify(self, check: Verification) -> VerificationResult:
        """The recorded outcome (a replayed run that had finished), else a live check."""
        event = self.recording.verification
        if event is None:
            return await self.inner.verify(check)
        return VerificationResult(
            event.outcome, tuple(event.passed), tuple(event.failed), event.output
        )


KEYED_PART_CHARS = 16
HEX = frozenset("0123456789abcdef")


def served_verdict(verdicts: dict[str, GateVerdict], gate_id: str) -> GateVerdict | None:
    """The decision recorded for the gate `gate_id`: under its id, or under the id it is
    made from (`EventLog.gate_id` adds a part keyed with its log's secret; a fork's served
    decisions are keyed by the fork's gate ids without that part, which its own log makes)."""
    verdict = verdicts.get(gate_id)
    if verdict is not None:
        return verdict
    base, _, keyed = gate_id.rpartition("_")
    is_keyed_part = len(keyed) == KEYED_PART_CHARS and all(c in HEX for c in keyed)
    return verdicts.get(base) if base and is_keyed_part else None


def replaying(live: Effects, recorded: Sequence[Event]) -> Effects:
    """`live`, served from `recorded` first when there is a recording (resume, replay)."""
    return ReplayEffects(Recording.of(recorded), live) if recorded else live
