"""Argument validation: a fast path for flat schemas, jsonschema for everything else.

Most tool schemas are a flat object of primitive-typed properties. Checking those by
hand costs about a microsecond; a general JSON Schema validator costs tens. The fast path
gives the same verdicts (and similar messages) for the schemas it accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema.exceptions
import jsonschema.validators

Check = Callable[[dict[str, Any]], str | None]
"""Returns None when the arguments are valid, else a message naming the argument."""

_PRIMITIVES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def _is_type(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, _PRIMITIVES[name])


def _flat_property_types(schema: dict[str, Any]) -> dict[str, str] | None:
    """{name: type} when every property is exactly {"type": primitive, ...docs}; else None."""
    allowed_keys = {"type", "description", "default", "title"}
    types: dict[str, str] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict) or set(prop) - allowed_keys:
            return None
        kind = prop.get("type")
        if kind not in _PRIMITIVES or kind in ("object", "array"):
            return None
        types[name] = kind
    return types


def _fast_check(schema: dict[str, Any]) -> Check | None:
    if schema.get("type") != "object" or set(schema) - {
        "type", "properties", "required", "additionalProperties", "title", "description"
    }:  # fmt: skip
        return None
    types = _flat_property_types(schema)
    if types is None:
        return None
    required = list(schema.get("required") or ())
    closed = schema.get("additionalProperties") is False

    def check(arguments: dict[str, Any]) -> str | None:
        for name in required:
            if name not in arguments:
                return f"invalid arguments (arguments): {name!r} is a required property"
        for name, value in arguments.items():
            kind = types.get(name)
            if kind is None:
                if closed:
                    return f"invalid arguments (arguments): unexpected argument {name!r}"
                continue
            if not _is_type(value, kind):
                return f"invalid arguments ({name}): {value!r} is not of type {kind!r}"
        return None

    return check


def compile_validator(schema: dict[str, Any]) -> Check:
    """A checker for `schema`, compiled once per tool."""
    fast = _fast_check(schema)
    if fast is not None:
        return fast
    validator = jsonschema.validators.validator_for(schema)(schema)

    def check(arguments: dict[str, Any]) -> str | None:
        error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "arguments"
        return f"invalid arguments ({where}): {error.message}"

    return check
