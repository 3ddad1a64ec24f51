"""JSON Schema for a function's parameters, from its signature and docstring."""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, get_args, get_origin

from loopwright.errors import ToolDefinitionError

_SIMPLE: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def type_to_schema(annotation: Any, where: str) -> dict[str, Any]:
    """The JSON Schema of one annotation; raises ToolDefinitionError for unsupported types."""
    if annotation in _SIMPLE:
        return {"type": _SIMPLE[annotation]}
    if annotation is Any:
        return {}
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
        item = type_to_schema(args[0], where) if args else {}
        return {"type": "array", "items": item}
    if origin is dict or annotation is dict:
        return {"type": "object"}
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return type_to_schema(options[0], where)
        return {"anyOf": [type_to_schema(a, where) for a in options]}
    raise ToolDefinitionError(f"{where}: unsupported parameter type {annotation!r}")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """(summary, {param: description}) from a Google- or Sphinx-style docstring."""
    doc = inspect.cleandoc(doc or "")
    summary = doc.split("\n\n", 1)[0].replace("\n", " ").strip()
    params: dict[str, str] = {}
    pattern = r"^[ \t]*(?::param[ \t]+)?(\w+)[ \t]*(?:\([^)\n]*\))?[ \t]*:[ \t]*(.+)$"
    for match in re.finditer(pattern, doc, re.M):
        name, text = match.group(1), match.group(2).strip()
        if name.lower() not in {"args", "returns", "raises", "example", "examples", "note"}:
            params.setdefault(name, text)
    return summary, params


def schema_from_function(
    function: Callable[..., Any],
) -> tuple[dict[str, Any], str, str | None]:
    """(parameters schema, description, name of the ToolContext parameter or None)."""
    where = getattr(function, "__qualname__", repr(function))
    try:
        hints = typing.get_type_hints(function)
    except Exception as exc:
        raise ToolDefinitionError(f"{where}: cannot read type hints: {exc}") from exc
    summary, param_docs = parse_docstring(function.__doc__ or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    context_param: str | None = None
    for param in inspect.signature(function).parameters.values():
        annotation = hints.get(param.name, inspect.Parameter.empty)
        if getattr(annotation, "__name__", "") == "ToolContext":
            context_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(f"{where}: *args/**kwargs cannot be tool parameters")
        if annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(f"{where}: parameter {param.name!r} needs a type hint")
        prop = type_to_schema(annotation, f"{where}({param.name})")
        if param.name in param_docs:
            prop["description"] = param_docs[param.name]
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        elif param.default is not None:
            prop["default"] = param.default
        properties[param.name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    schema["additionalProperties"] = False
    return schema, summary or where, context_param
