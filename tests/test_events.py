"""The event wire format: round trips, and a frozen fixture per schema version."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.events import (
    EVENT_TYPES,
    SCHEMA_VERSION,
    EventDecodeError,
    ToolCallFinished,
    decode_event,
    encode_event,
)

FIXTURES = Path(__file__).parent / "fixtures"


def test_every_event_type_round_trips() -> None:
    for name, cls in EVENT_TYPES.items():
        event = cls(run_id="r", seq=1, ts=1.5)
        decoded = decode_event(encode_event(event))
        assert decoded == event, name
        assert decoded.type == name


def test_wire_carries_schema_version() -> None:
    line = encode_event(ToolCallFinished(run_id="r", seq=2, ts=0.0, tool_name="echo"))
    assert f'"v":{SCHEMA_VERSION}' in line


def test_frozen_current_fixture_decodes_and_reencodes_identically() -> None:
    lines = (FIXTURES / f"events_v{SCHEMA_VERSION}.jsonl").read_text().splitlines()
    assert lines
    for line in lines:
        assert encode_event(decode_event(line)) == line


def test_v1_fixture_is_still_read_and_upgrades_to_the_current_version() -> None:
    old = (FIXTURES / "events_v1.jsonl").read_text().splitlines()
    current = (FIXTURES / f"events_v{SCHEMA_VERSION}.jsonl").read_text().splitlines()
    assert len(old) == len(current)
    for line, upgraded in zip(old, current, strict=True):
        assert encode_event(decode_event(line)) == upgraded
        assert '"v":1}' in line and f'"v":{SCHEMA_VERSION}}}' in upgraded


@pytest.mark.parametrize(
    "line, problem",
    [
        ('{"type":"nope","run_id":"r","seq":1,"ts":0}', "unknown event type"),
        ('{"type":"warning","run_id":"r","seq":1,"ts":0,"v":99}', "schema version"),
        ('{"type":"warning","run_id":"r","seq":1,"ts":0,"bogus":1}', "bad warning"),
        ("[1,2]", "not a JSON object"),
        ("{", "not JSON"),
    ],
)
def test_bad_wire_events_are_rejected_clearly(line: str, problem: str) -> None:
    with pytest.raises(EventDecodeError, match=problem):
        decode_event(line)
