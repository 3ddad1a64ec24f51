"""Argument validation: a fast path for flat schemas, a bounded JSON Schema validator
(tools/_jsonschema.py) for everything else.

Declared aliases (`@tool(aliases={"file_path": "path"})`) are accepted and renamed to
their parameter before the check (`with_aliases`) and the call (`apply_aliases`).

Most tool schemas are a flat object of primitive-typed properties. Checking those by
hand costs about a microsecond; a general JSON Schema validator costs tens. The fast path
gives the same verdicts (and similar messages) for the schemas it accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from loopwright.tools._jsonschema import SchemaError, SchemaProblem, SchemaValidator

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
    if name == "null":
        return value is None
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, _PRIMITIVES[name])


def _type_name(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is_type(value, name):
            return name
    return type(value).__name__


_EXACT: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}
"""Exact Python types that certainly match a JSON type (subclasses take the slow path)."""


def _expected(types: tuple[str, ...]) -> str:
    return " or ".join(repr(t) for t in types)


def _flat_property_types(schema: dict[str, Any]) -> dict[str, tuple[str, ...]] | None:
    """{name: allowed types} when every property is {"type": primitive(s), ...docs}."""
    allowed_keys = {"type", "description", "default", "title"}
    simple = set(_PRIMITIVES) - {"object", "array"} | {"null"}
    types: dict[str, tuple[str, ...]] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict) or set(prop) - allowed_keys:
            return None
        kind = prop.get("type")
        kinds = tuple(kind) if isinstance(kind, list) else (kind,)
        if not kinds or any(k not in simple for k in kinds):
            return None
        types[name] = kinds
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
    exact = {name: {t for kind in kinds for t in _EXACT[kind]} for name, kinds in types.items()}

    def check(arguments: dict[str, Any]) -> str | None:
        for name in required:
            if name not in arguments:
                return f"invalid arguments: missing required argument {name!r}"
        for name, value in arguments.items():
            kinds = types.get(name)
            if kinds is None:
                if closed:
                    return unexpected_argument(name, list(types))
                continue
            if type(value) in exact[name]:
                continue
            if not any(_is_type(value, kind) for kind in kinds):
                return (
                    f"invalid arguments ({name}): {value!r} is not of type "
                    f"{_expected(kinds)} (got {_type_name(value)})"
                )
        return None

    return check


def unexpected_argument(name: str, known: list[str]) -> str:
    takes = ", ".join(known) if known else "no arguments"
    return f"invalid arguments: unexpected argument {name!r} (this tool takes: {takes})"


def _describe_error(error: SchemaError, schema: dict[str, Any], arguments: Any) -> str:
    path = [str(p) for p in error.path]
    where = "/".join(path)
    if error.keyword == "required":
        name = "/".join([*path, str(error.details.get("property", ""))])
        return f"invalid arguments: missing required argument {name!r}"
    if error.keyword == "additionalProperties":
        extra = [str(name) for name in error.details.get("unexpected") or ()]
        if extra:
            return unexpected_argument("/".join([*path, extra[0]]), _known(schema, error.path))
    if not path:
        return f"invalid arguments: {error.message}"
    return f"invalid arguments ({where}): {error.message}"


def _known(schema: dict[str, Any], path: tuple[str | int, ...]) -> list[str]:
    """The property names the schema declares for the object at `path` (top level, or
    nested under `properties`)."""
    node: Any = schema
    for part in path:
        properties = node.get("properties") if isinstance(node, dict) else None
        node = properties.get(part) if isinstance(properties, dict) else None
    properties = node.get("properties") if isinstance(node, dict) else None
    return list(properties) if isinstance(properties, dict) else []


def compile_validator(schema: dict[str, Any]) -> Check:
    """A checker for `schema`, compiled once per tool. Messages name the argument. A schema
    that cannot be used (tools/_jsonschema.py) makes every call an error that says why."""
    fast = _fast_check(schema)
    if fast is not None:
        return fast
    try:
        validator = SchemaValidator(schema)
    except SchemaProblem as exc:  # an MCP server's schema: every call says why
        unusable = f"invalid arguments: the tool's input schema cannot be used: {exc}"
        return lambda arguments: unusable

    def check(arguments: dict[str, Any]) -> str | None:
        errors = validator.errors(arguments, limit=1)
        return _describe_error(errors[0], schema, arguments) if errors else None

    return check


def apply_aliases(arguments: dict[str, Any], aliases: Mapping[str, str]) -> dict[str, Any] | str:
    """The arguments with each declared alias renamed to its parameter (the same dict when
    none is used), or a message when an alias and its parameter are both given."""
    if not any(alias in arguments for alias in aliases):
        return arguments
    renamed = dict(arguments)
    for alias, name in aliases.items():
        if alias not in renamed:
            continue
        if name in renamed:
            return (
                f"invalid arguments: {name!r} and its alias {alias!r} were both given; "
                f"give only {name!r}"
            )
        renamed[name] = renamed.pop(alias)
    return renamed


def check_aliases(aliases: Mapping[str, str], schema: dict[str, Any]) -> str | None:
    """What is wrong with an alias declaration for a tool with `schema` (None: nothing)."""
    properties = schema.get("properties") or {}
    for alias, name in aliases.items():
        if name not in properties:
            return f"alias {alias!r} names {name!r}, which is not a parameter"
        if alias in properties:
            return f"alias {alias!r} is already a parameter"
    return None


def with_aliases(check: Check, aliases: Mapping[str, str]) -> Check:
    """`check` that also accepts the declared aliases of the parameters."""
    if not aliases:
        return check

    def check_renamed(arguments: dict[str, Any]) -> str | None:
        renamed = apply_aliases(arguments, aliases)
        return renamed if isinstance(renamed, str) else check(renamed)

    return check_renamed
