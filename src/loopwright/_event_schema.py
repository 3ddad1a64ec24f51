"""The JSON Schema of the event wire format, derived from the event dataclasses.

`scripts/event_schema.py` writes it to docs/events.schema.json; a test checks that the
file is current and that every frozen fixture validates against it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Literal, Union

from loopwright.events import SCHEMA_VERSION
from loopwright.events._types import EVENT_CLASSES

_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


def type_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one field's type hint."""
    if hint is Any:
        return {}
    if hint in _SCALARS:
        return dict(_SCALARS[hint])
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        return {"anyOf": [type_schema(arg) for arg in args]}
    if origin is list:
        return {"type": "array", "items": type_schema(args[0]) if args else {}}
    if origin is dict:
        value = type_schema(args[1]) if len(args) == 2 else {}
        return {"type": "object", "additionalProperties": value}
    raise TypeError(f"no JSON Schema for {hint!r}")


def event_schema(cls: type[Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {"v": {"const": SCHEMA_VERSION}}
    required = ["v"]
    for field in dataclasses.fields(cls):
        properties[field.name] = type_schema(hints[field.name])
        if field.name == "type":
            properties["type"] = {"const": field.default}
        no_default = field.default is dataclasses.MISSING
        required_field = no_default and field.default_factory is dataclasses.MISSING
        if required_field or field.name in ("type", "run_id", "seq", "ts"):
            required.append(field.name)
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def events_schema() -> dict[str, Any]:
    """One schema for any event: `oneOf` the schema of each type, by its `type`."""
    definitions = {
        str(cls.__dataclass_fields__["type"].default): event_schema(cls) for cls in EVENT_CLASSES
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"loopwright event, schema version {SCHEMA_VERSION}",
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in definitions],
        "$defs": definitions,
    }
