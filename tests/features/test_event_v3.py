"""Event schema v3 (structured output, approvals, sub-agents): v2 lines are still read and
upgrade to the v3 fixture; the new fields and type round-trip."""

from __future__ import annotations

from pathlib import Path

from loopwright.events import (
    GateDecisionEvent,
    OutputInvalidEvent,
    RunStartedEvent,
    decode_event,
    encode_event,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_v2_fixture_is_read_and_upgrades_to_v3() -> None:
    old = (FIXTURES / "events_v2.jsonl").read_text().splitlines()
    current = (FIXTURES / "events_v3.jsonl").read_text().splitlines()
    assert len(old) == len(current)
    for line, upgraded in zip(old, current, strict=True):
        assert encode_event(decode_event(line)) == upgraded
    started = decode_event(current[0])
    assert isinstance(started, RunStartedEvent) and started.parent_call_id is None


def test_new_fields_round_trip() -> None:
    events = [
        RunStartedEvent(run_id="c", seq=1, ts=0.0, parent_run_id="p", parent_call_id="call_1_0"),
        GateDecisionEvent(run_id="r", seq=2, ts=0.0, request_id="g", approved=False, reason="no"),
        OutputInvalidEvent(run_id="r", seq=3, ts=0.0, answer="{}", errors=["x: missing"]),
    ]
    for event in events:
        assert decode_event(encode_event(event)) == event
