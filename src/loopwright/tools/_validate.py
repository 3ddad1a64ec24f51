"""Argument validation: a fast path for flat schemas, jsonschema for everything else.

Declared aliases (`@tool(aliases={"file_path": "path"})`) are accepted and renamed to
their parameter before the check (`with_aliases`) and the call (`apply_aliases`).

Most tool schemas are a flat object of primitive-typed properties. Checking those by
hand costs about a microsecond; a general JSON Schema validator costs tens. The fast path
gives the same verdicts (and similar messages) for the schemas it accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema.exceptions

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


def _describe_error(error: jsonschema.exceptions.ValidationError) -> str:
    path = [str(p) for p in error.absolute_path]
    where = "/".join(path)
    if error.validator == "required" and isinstance(error.instance, dict):
        wanted: list[str] = list(error.validator_value or ())  # type: ignore[arg-type]
        missing = [n for n in wanted if n not in error.instance]
        name = "/".join([*path, missing[0]]) if missing else where
        return f"invalid arguments: missing required argument {name!r}"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        schema = error.schema if isinstance(error.schema, dict) else {}
        known = list(schema.get("properties") or ())
        extra = [n for n in error.instance if n not in known]
        if extra:
            return unexpected_argument("/".join([*path, extra[0]]), known)
    if not path:
        return f"invalid arguments: {error.message}"
    return f"invalid arguments ({where}): {error.message}"


def compile_validator(schema: dict[str, Any]) -> Check:
    """A checker for `schema`, compiled once per tool. Messages name the argument."""
    fast = _fast_check(schema)
    if fast is not None:
        return fast
    # imported here: most tools have flat schemas, and the CLI starts ~30 ms sooner
    # without jsonschema (python -X importtime)
    import jsonschema.exceptions
    import jsonschema.validators

    validator = jsonschema.validators.validator_for(schema)(schema)
    best_match = jsonschema.exceptions.best_match

    def check(arguments: dict[str, Any]) -> str | None:
        error = best_match(validator.iter_errors(arguments))
        if error is None:
            return None
        return _describe_error(error)

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
