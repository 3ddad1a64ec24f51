"""The events' JSON codec: `event_to_dict` / `event_from_dict` (the wire form, with `v`),
`encode_event` / `decode_event` (one line of JSON, what the stores keep and `--json` prints).
Older schema versions are read and upgraded."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import orjson

from loopwright.errors import EventDecodeError
from loopwright.events._types import (
    EVENT_TYPES,
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    Event,
    reply_end,
)

_STAMPS = ("run_id", "seq", "ts")
"""What every written event holds (a producer's draft leaves them to the EventLog)."""
_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}
"""Each event class's field names (`dataclasses.fields` builds a tuple on every call)."""


def _plain(value: object) -> object:
    """What JSON has no type for: a dataclass as an object of its fields (as orjson writes
    one), anything else as its str()."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return str(value)


_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_plain)
"""The standard library's encoder: for what orjson refuses (an integer beyond 64 bits, a
lone surrogate, nesting deeper than 254)."""
_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
"""Non-string keys written as strings, datetimes through `default=str` (as the standard
library's encoder writes them)."""
_VERSION_FIELD = b',"v":%d}' % SCHEMA_VERSION


def _line(event: Event) -> str:
    """Compact JSON, non-ASCII as is: orjson writes the event's dataclass itself (its fields
    in order) and `v` goes in place of the closing brace (about ten times faster than the
    standard library's encoder, which stays for what orjson refuses). Where it differs
    from the standard library, it writes what JSON means: NaN and infinities as null (not
    the invalid `NaN`), exponents without "+" (1e16), an Enum member as its value (not
    `str(member)`), a dataclass in a field as an object of its fields (both encoders).
    Lines are read with the standard library's decoder: orjson reads an integer beyond 64
    bits as a float."""
    try:
        data = orjson.dumps(event, default=str, option=_ORJSON_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return _escape_surrogates(_LINE.encode(event_to_dict(event)))
    return (data[:-1] + _VERSION_FIELD).decode()


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogates(line: str) -> str:
    """A lone surrogate (a provider's JSON can carry one; orjson refuses it) as its JSON
    escape, so the line is valid UTF-8 for every store and stream and decodes the same."""
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", line)


def event_to_dict(event: Event) -> dict[str, Any]:
    """The wire form of an event: its fields plus `v`, the schema version."""
    names = _FIELD_NAMES.get(type(event))
    if names is None:
        names = _FIELD_NAMES[type(event)] = tuple(f.name for f in dataclasses.fields(event))
    data = {name: getattr(event, name) for name in names}
    data["v"] = SCHEMA_VERSION
    return data


def _upgrade(fields: dict[str, Any], version: int) -> dict[str, Any]:
    """v1 and v2 -> v3: `iteration` became `iteration_number`. v3 -> v4: a model response
    says how it ended (`ended`, read from its reply's `finish_reason`). v4 -> v5: nothing
    to change (a run before v5 is neither a follow-up nor a fork: its new fields are None)."""
    if "iteration" in fields:
        fields["iteration_number"] = fields.pop("iteration")
    if version < 4 and fields.get("type") == "model_response" and "ended" not in fields:
        response = fields.get("response")
        reason = response.get("finish_reason") if isinstance(response, dict) else None
        fields["ended"] = reply_end(reason if isinstance(reason, str) else None)
    return fields


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from its wire form; unknown or missing fields are an error."""
    version = data.get("v", SCHEMA_VERSION)
    if version not in READABLE_VERSIONS:
        raise EventDecodeError(
            f"unsupported event schema version {version!r} (this loopwright reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}): upgrade loopwright"
        )
    cls = EVENT_TYPES.get(str(data.get("type")))
    if cls is None:
        raise EventDecodeError(f"unknown event type {data.get('type')!r}")
    fields = {k: v for k, v in data.items() if k != "v"}
    missing = [name for name in _STAMPS if name not in fields]
    if missing:  # defaults for producers' drafts, never for what was written
        raise EventDecodeError(f"bad {data.get('type')} event: missing {', '.join(missing)}")
    if version < SCHEMA_VERSION:
        fields = _upgrade(fields, version)
    try:
        event: Event = cls(**fields)
    except TypeError as exc:
        raise EventDecodeError(f"bad {data.get('type')} event: {exc}") from exc
    return event


def encode_event(event: Event) -> str:
    """One line of JSON (what the stores keep and `--json` prints)."""
    return _line(event)


def decode_event(line: str) -> Event:
    """An event from one line of JSON; EventDecodeError says what is wrong with it."""
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise EventDecodeError(f"event is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise EventDecodeError("event is not a JSON object")
    return event_from_dict(data)
