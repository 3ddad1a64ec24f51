"""The event wire format: a frozen fixture per schema version, the JSON Schema, the names."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest

from loopwright._event_schema import events_schema
from loopwright.errors import EventDecodeError, UsageError
from loopwright.events import (
    SCHEMA_VERSION,
    Event,
    ModelResponseEvent,
    ToolCallEvent,
    decode_event,
    encode_event,
)

ROOT = Path(__file__).parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
EVENT_CLASSES: tuple[type[Any], ...] = get_args(Event)
"""Every event a run can log: the members of the `Event` union."""
EVENT_TYPES = {str(cls.__dataclass_fields__["type"].default): cls for cls in EVENT_CLASSES}


def lines(version: int) -> list[str]:
    return (FIXTURES / f"events_v{version}.jsonl").read_text().splitlines()


def test_the_current_fixture_has_every_type_and_reencodes_identically() -> None:
    current = lines(SCHEMA_VERSION)
    assert {json.loads(line)["type"] for line in current} == set(EVENT_TYPES)
    for line in current:
        assert encode_event(decode_event(line)) == line


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_older_events_are_still_read_and_upgrade_to_the_current_version(version: int) -> None:
    old, current = lines(version), lines(SCHEMA_VERSION)
    for line, upgraded in zip(old, current, strict=False):
        assert f'"v":{version}}}' in line and f'"v":{SCHEMA_VERSION}}}' in upgraded
        assert encode_event(decode_event(line)) == upgraded
    assert any('"iteration":' in line for line in old) == (version < 3)
    assert not any('"iteration":' in line for line in current)
    assert any('"ended":' in line for line in old) == (version >= 4)
    assert not any('"after_run_id":' in line or '"fork_of":' in line for line in old)
    assert any('"after_run_id":"run_' in line for line in current)  # v5: a follow-up
    assert any('"fork_of":{"run_id":' in line for line in current)  # v5: a fork


@pytest.mark.parametrize(
    ("finish_reason", "ended"),
    [(None, "stop"), ("stop", "stop"), ("tool_calls", "stop"), ("end_turn", "stop"),
     ("length", "length"), ("max_tokens", "length"), ("action_complete", "action_complete")],
)  # fmt: skip
def test_a_v3_model_response_says_how_it_ended_from_its_finish_reason(
    finish_reason: str | None, ended: str
) -> None:
    v3 = next(json.loads(line) for line in lines(3) if '"model_response"' in line)
    v3["response"]["finish_reason"] = finish_reason
    event = decode_event(json.dumps(v3))
    assert isinstance(event, ModelResponseEvent) and event.ended == ended


def test_every_fixture_event_validates_against_the_json_schema() -> None:
    schema = json.loads((ROOT / "docs" / "events.schema.json").read_text())
    kind = jsonschema.validators.validator_for(schema)
    kind.check_schema(schema)
    validator = kind(schema)  # built once: `jsonschema.validate` checks the schema each call
    for line in lines(SCHEMA_VERSION):
        validator.validate(json.loads(line))
    bad = json.loads(lines(SCHEMA_VERSION)[0]) | {"bogus": 1}
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(bad)


@pytest.mark.subprocess
def test_the_json_schema_file_is_current() -> None:
    assert json.loads((ROOT / "docs" / "events.schema.json").read_text()) == events_schema()
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "event_schema.py"), "--check"], check=False
    )
    assert check.returncode == 0


def test_class_names_are_the_wire_types_in_camel_case() -> None:
    assert len(EVENT_CLASSES) == len(EVENT_TYPES)
    for wire, cls in EVENT_TYPES.items():
        camel = "".join(part.title() for part in wire.split("_"))
        assert cls.__name__ == f"{camel}Event", wire


def test_one_name_for_the_iteration_in_every_event() -> None:
    names = {name for cls in EVENT_CLASSES for name in cls.__dataclass_fields__}
    assert "iteration_number" in names and "iteration" not in names


def test_required_fields_have_no_default() -> None:
    with pytest.raises(TypeError, match="missing"):
        ToolCallEvent(run_id="r", seq=2, ts=0.0, tool_name="echo")  # type: ignore[call-arg]


def test_wire_carries_schema_version() -> None:
    event = ToolCallEvent(
        run_id="r", seq=2, ts=0.0, iteration_number=1, call_id="c1", tool_name="echo",
        arguments={}, args_summary="{}", result="hi", result_summary="hi", is_error=False,
        duration_ms=0.1,
    )  # fmt: skip
    assert re.search(rf'"v":{SCHEMA_VERSION}}}$', encode_event(event))


@pytest.mark.parametrize(
    "line, problem",
    [
        ('{"type":"nope","run_id":"r","seq":1,"ts":0}', "unknown event type"),
        ('{"type":"warning","run_id":"r","seq":1,"ts":0,"v":99}', "schema version 99"),
        ('{"type":"warning","run_id":"r","seq":1,"ts":0,"message":"x","bogus":1}', "bogus"),
        ('{"type":"warning","run_id":"r","seq":1,"ts":0}', "message"),
        ('{"type":"warning","seq":1,"ts":0,"message":"x"}', "missing run_id"),
        ('{"type":"warning","run_id":"r","message":"x"}', "missing seq, ts"),
        ("[1,2]", "not a JSON object"),
        ("{", "not JSON"),
    ],
)
def test_bad_wire_events_are_rejected_clearly(line: str, problem: str) -> None:
    with pytest.raises(EventDecodeError, match=problem) as caught:
        decode_event(line)
    assert isinstance(caught.value, UsageError)  # one exception tree


def _tool_call(arguments: dict[str, Any]) -> ToolCallEvent:
    return ToolCallEvent(
        run_id="r", seq=2, ts=0.5, iteration_number=1, call_id="c1", tool_name="echo",
        arguments=arguments, args_summary="{}", result="hi", result_summary="hi",
        is_error=False, duration_ms=0.1,
    )  # fmt: skip


def _strict(line: str) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize(
    "value",
    [
        2**70,  # beyond 64 bits
        "lone \ud800 surrogate",
        json.loads("[" * 300 + "]" * 300),  # deeper than orjson nests
    ],
    ids=["big-int", "surrogate", "deep"],
)
def test_values_the_fast_encoder_refuses_are_still_written_whole(value: Any) -> None:
    line = encode_event(_tool_call({"x": value}))
    assert json.loads(line)["arguments"] == {"x": value}


def test_lines_are_strict_json_as_the_standard_library_writes_them() -> None:
    @dataclasses.dataclass
    class Point:
        x: int

    arguments: dict[Any, Any] = {
        "nan": float("nan"),
        "inf": float("inf"),
        3: "int key",
        "p": Point(1),
    }
    line = encode_event(_tool_call(arguments))
    assert _strict(line)["arguments"] == {
        "nan": None, "inf": None, "3": "int key", "p": {"x": 1}
    }  # fmt: skip
    beyond_orjson = encode_event(_tool_call({"big": 2**70, "p": Point(2)}))  # stdlib's encoder
    assert _strict(beyond_orjson)["arguments"] == {"big": 2**70, "p": {"x": 2}}
    assert '"text":"é ✓"' in encode_event(_tool_call({"text": "é ✓"}))  # not \\u-escaped


def test_an_integer_beyond_64_bits_comes_back_exact() -> None:
    big = 2**100 + 1
    event = decode_event(encode_event(_tool_call({"n": big})))
    assert isinstance(event, ToolCallEvent) and event.arguments == {"n": big}
