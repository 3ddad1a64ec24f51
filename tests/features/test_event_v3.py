"""Event schema v3's fields for sub-agents, approvals and structured output round-trip with
real values (tests/test_events.py holds the fixtures of every version)."""

from __future__ import annotations

from loopwright.events import (
    Event,
    GateDecisionEvent,
    OutputInvalidEvent,
    RunStartedEvent,
    decode_event,
    encode_event,
)


def test_new_fields_round_trip() -> None:
    events: list[Event] = [
        RunStartedEvent(
            run_id="c", seq=1, ts=0.0, kind="agent", request="look it up", model="scripted",
            tools=["echo"], options={}, tenant="acme", parent_run_id="p", parent_call_id="call_1_0",
        ),
        GateDecisionEvent(
            run_id="r", seq=2, ts=0.0, step="delete_file", request_id="g", approved=False,
            decided_by="api:acme", reason="no",
        ),
        OutputInvalidEvent(
            run_id="r", seq=3, ts=0.0, iteration_number=2, answer="{}", errors=["x: missing"],
            will_retry=True,
        ),
    ]  # fmt: skip
    for event in events:
        decoded = decode_event(encode_event(event))
        assert decoded == event
    started = decode_event(encode_event(events[0]))
    assert isinstance(started, RunStartedEvent) and started.parent_call_id == "call_1_0"
