"""Pending gates, read from a run's log: asked for and not yet decided, rejected or over."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from loopwright.events import (
    ConfirmationRequired,
    Event,
    GateDecided,
    RunFinished,
    StepComplete,
    TaskComplete,
)


def pending_gates(events: Iterable[Event]) -> list[dict[str, Any]]:
    """Gates of a run still waiting for a decision, oldest first."""
    waiting: dict[str, ConfirmationRequired] = {}
    for event in events:
        if isinstance(event, ConfirmationRequired):
            waiting[event.request_id] = event
        elif isinstance(event, GateDecided):
            waiting.pop(event.request_id, None)
        elif isinstance(event, StepComplete):
            for request_id, gate in list(waiting.items()):
                if gate.step == event.step:
                    del waiting[request_id]
        elif isinstance(event, RunFinished | TaskComplete):
            waiting.clear()
    return [
        {
            "request_id": gate.request_id,
            "step": gate.step,
            "message": gate.message,
            "seq": gate.seq,
            "ts": gate.ts,
            "timeout_s": gate.timeout_s,
        }
        for gate in waiting.values()
    ]


def gate_was_asked(events: Iterable[Event], request_id: str) -> bool:
    return any(isinstance(e, ConfirmationRequired) and e.request_id == request_id for e in events)
