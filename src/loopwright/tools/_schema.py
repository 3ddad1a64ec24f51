"""JSON Schema for a function's parameters, from its signature and docstring.

Supported annotations: str, int, float, bool, None, Any, Literal[...], Enum subclasses,
list/Sequence/set/frozenset[X], tuple[X, ...] and tuple[X, Y], dict/Mapping[str, X],
X | None (Optional), unions, Annotated[X, "description"], TypedDict and dataclasses
(nested as deep as wanted). Anything else is a ToolDefinitionError naming the parameter.

Enum and dataclass parameters are converted from their JSON form before the call.
"""

from __future__ import annotations

import collections.abc as abc
import dataclasses
import enum
import inspect
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args, get_origin, is_typeddict

from loopwright.errors import ToolDefinitionError
from loopwright.tools._context import ToolContext
from loopwright.tools._docstrings import parse_docstring

Convert = Callable[[Any], Any]
_SIMPLE: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARRAYS = (list, set, frozenset, abc.Sequence, abc.Set, abc.MutableSequence, abc.Iterable)
_MAPPINGS = (dict, abc.Mapping, abc.MutableMapping)
SUPPORTED = (
    "str, int, float, bool, Literal[...], an Enum, list[...], tuple[...], dict[str, ...], "
    "X | None, a TypedDict or a dataclass"
)


@dataclass
class FunctionSchema:
    parameters: dict[str, Any]
    description: str
    context_param: str | None = None
    deps_type: Any = None
    """What `ctx: ToolContext[X]` declares the run's dependencies to be (X); None for a
    bare `ToolContext` or none."""
    converters: dict[str, Convert] = field(default_factory=dict)
    """Parameter name -> function turning its JSON value into the annotated type."""


@dataclass
class _Described:
    """One annotation's schema and, when the JSON value needs converting, a converter."""

    schema: dict[str, Any]
    convert: Convert | None = None


def _scalar_type(values: tuple[Any, ...]) -> str | None:
    kinds = {type(v) for v in values}
    if len(kinds) == 1 and (kind := kinds.pop()) in _SIMPLE:
        return _SIMPLE[kind]
    return None


def _enum(annotation: type[enum.Enum], where: str) -> _Described:
    values = tuple(member.value for member in annotation)
    if not all(isinstance(v, str | int | float | bool) for v in values):
        raise ToolDefinitionError(f"{where}: enum {annotation.__name__} has non-JSON values")
    schema: dict[str, Any] = {"enum": list(values)}
    if kind := _scalar_type(values):
        schema = {"type": kind, **schema}
    return _Described(schema, annotation)


def _literal(args: tuple[Any, ...], where: str) -> _Described:
    if not all(v is None or isinstance(v, str | int | float | bool) for v in args):
        raise ToolDefinitionError(f"{where}: Literal values must be str, int, float or bool")
    schema: dict[str, Any] = {"enum": list(args)}
    if kind := _scalar_type(args):
        schema = {"type": kind, **schema}
    return _Described(schema)


def _array(origin: Any, args: tuple[Any, ...], where: str, seen: frozenset[Any]) -> _Described:
    if origin is tuple and args and args[-1] is not Ellipsis:
        items = [describe(a, where, seen) for a in args]
        schema = {
            "type": "array",
            "prefixItems": [i.schema for i in items],
            "minItems": len(items),
            "maxItems": len(items),
        }
        if not any(i.convert for i in items):
            return _Described(schema)
        converts = [i.convert or _same for i in items]
        return _Described(schema, lambda v: tuple(c(x) for c, x in zip(converts, v, strict=True)))
    item = describe(args[0], where, seen) if args else _Described({})
    schema = {"type": "array", "items": item.schema}
    if origin in (set, frozenset, abc.Set):
        schema["uniqueItems"] = True
    container: Callable[[Any], Any] = (
        origin if origin in (set, frozenset, tuple) else (set if origin is abc.Set else list)
    )
    if item.convert is None:
        return _Described(schema, None if container is list else container)
    convert = item.convert
    return _Described(schema, lambda v: container(convert(x) for x in v))


def _mapping(args: tuple[Any, ...], where: str, seen: frozenset[Any]) -> _Described:
    if args and args[0] is not str:
        raise ToolDefinitionError(f"{where}: dict keys must be str (JSON object keys)")
    if not args or args[1] is Any:
        return _Described({"type": "object"})
    value = describe(args[1], where, seen)
    schema = {"type": "object", "additionalProperties": value.schema}
    if value.convert is None:
        return _Described(schema)
    convert = value.convert
    return _Described(schema, lambda v: {k: convert(x) for k, x in v.items()})


def _union(args: tuple[Any, ...], where: str, seen: frozenset[Any]) -> _Described:
    options = [a for a in args if a is not type(None)]
    nullable = len(options) < len(args)
    described = [describe(a, where, seen) for a in options]
    if len(described) == 1:
        inner = described[0]
        schema = dict(inner.schema)
        if nullable and isinstance(schema.get("type"), str) and "enum" not in schema:
            schema["type"] = [schema["type"], "null"]
        elif nullable:
            schema = {"anyOf": [inner.schema, {"type": "null"}]}
        convert = inner.convert
        if convert is None:
            return _Described(schema)
        return _Described(schema, lambda v: None if v is None else convert(v))
    if any(d.convert for d in described):
        raise ToolDefinitionError(f"{where}: unions of Enum or dataclass types are not supported")
    schemas = [d.schema for d in described] + ([{"type": "null"}] if nullable else [])
    return _Described({"anyOf": schemas})


def _object(
    annotation: Any, where: str, seen: frozenset[Any], hints: dict[str, Any], required: set[str]
) -> tuple[dict[str, Any], dict[str, Convert]]:
    if annotation in seen:
        raise ToolDefinitionError(f"{where}: recursive type {annotation.__name__} is not supported")
    seen = seen | {annotation}
    properties: dict[str, Any] = {}
    converters: dict[str, Convert] = {}
    for name, hint in hints.items():
        item = describe(hint, f"{where}.{name}", seen)
        properties[name] = item.schema
        if item.convert is not None:
            converters[name] = item.convert
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    schema["required"] = [n for n in hints if n in required]
    schema["additionalProperties"] = False
    return schema, converters


def _typed_dict(annotation: Any, where: str, seen: frozenset[Any]) -> _Described:
    hints = typing.get_type_hints(annotation)
    schema, converters = _object(annotation, where, seen, hints, set(annotation.__required_keys__))
    if not converters:
        return _Described(schema)
    return _Described(schema, lambda v: {k: converters.get(k, _same)(x) for k, x in v.items()})


def _dataclass(annotation: Any, where: str, seen: frozenset[Any]) -> _Described:
    hints = typing.get_type_hints(annotation)
    fields = [f for f in dataclasses.fields(annotation) if f.init]
    missing = dataclasses.MISSING
    required = {f.name for f in fields if f.default is missing and f.default_factory is missing}
    schema, converters = _object(
        annotation, where, seen, {f.name: hints[f.name] for f in fields}, required
    )
    if annotation.__doc__ and not annotation.__doc__.startswith(f"{annotation.__name__}("):
        schema = {"description": parse_docstring(annotation.__doc__).description, **schema}

    def convert(value: Any) -> Any:
        return annotation(**{k: converters.get(k, _same)(x) for k, x in value.items()})

    return _Described(schema, convert)


def _same(value: Any) -> Any:
    return value


def describe(annotation: Any, where: str, seen: frozenset[Any] = frozenset()) -> _Described:
    """The JSON Schema of one annotation; raises ToolDefinitionError for unsupported types."""
    if annotation in _SIMPLE:
        return _Described({"type": _SIMPLE[annotation]})
    if annotation is Any:
        return _Described({})
    if annotation is None or annotation is type(None):
        return _Described({"type": "null"})
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        inner = describe(args[0], where, seen)
        notes = [a for a in args[1:] if isinstance(a, str)]
        if notes:
            inner.schema = {**inner.schema, "description": " ".join(notes)}
        return inner
    if origin is Literal:
        return _literal(args, where)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum(annotation, where)
    if origin in (typing.Union, types.UnionType):
        return _union(args, where, seen)
    if origin in (*_ARRAYS, tuple) or annotation in (list, tuple, set, frozenset):
        return _array(origin or annotation, args, where, seen)
    if origin in _MAPPINGS or annotation in _MAPPINGS:
        return _mapping(args, where, seen)
    if is_typeddict(annotation):
        return _typed_dict(annotation, where, seen)
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return _dataclass(annotation, where, seen)
    raise ToolDefinitionError(
        f"{where}: type {getattr(annotation, '__name__', annotation)!r} cannot be described "
        f"as JSON; use {SUPPORTED}"
    )


def type_to_schema(annotation: Any, where: str) -> dict[str, Any]:
    """The JSON Schema of one annotation (see `describe`)."""
    return describe(annotation, where).schema


def _json_default(value: Any, where: str) -> Any:
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        raise ToolDefinitionError(
            f"{where}: default value {value!r} is not JSON (use None and set it in the body)"
        ) from None
    return value


def schema_from_function(function: Callable[..., Any]) -> FunctionSchema:
    """The parameters schema, description, ToolContext parameter and converters of a function."""
    where = getattr(function, "__qualname__", repr(function))
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(f"{where}: cannot read type hints: {exc}") from exc
    doc = parse_docstring(function.__doc__)
    result = FunctionSchema({}, doc.description or where)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(function).parameters.values():
        annotation = hints.get(param.name, inspect.Parameter.empty)
        if annotation is ToolContext or get_origin(annotation) is ToolContext:
            result.context_param = param.name
            result.deps_type = next(iter(get_args(annotation)), None)
            continue
        at = f"{where}({param.name})"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(f"{at}: *args/**kwargs cannot be tool parameters")
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(f"{at}: positional-only parameters cannot be tool parameters")
        if annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(f"{at}: parameter {param.name!r} needs a type hint")
        described = describe(annotation, at)
        prop = dict(described.schema)
        if doc.params.get(param.name):
            prop["description"] = doc.params[param.name]
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        elif param.default is not None:
            prop["default"] = _json_default(param.default, at)
        properties[param.name] = prop
        if described.convert is not None:
            result.converters[param.name] = described.convert
    result.parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return result
