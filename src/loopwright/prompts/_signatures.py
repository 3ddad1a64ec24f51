"""Tools as signatures, the way prompted mode lists them since revision 3.

`- add(a: number, b: number): Add two numbers.` and one line per described argument, in
place of the whole JSON Schema: the same facts (names, types, which are optional, enums,
defaults, descriptions) in about half the tokens, which a model on a CPU evaluates before
its first reply. A schema this cannot write plainly (`$ref`, `$defs`, `allOf`) keeps its
JSON line, so nothing is lost.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from loopwright.messages import ToolSpec

_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
_NOT_PLAIN = ("$ref", "$defs", "definitions", "allOf", "not", "if")


def tool_signatures(tools: Iterable[ToolSpec], allowed_tools: Iterable[str] | None = None) -> str:
    """The tools a prompt lists (those in `allowed_tools` when given), one signature each."""
    allowed = set(allowed_tools) if allowed_tools is not None else None
    return "\n".join(
        tool_signature(tool) for tool in tools if allowed is None or tool.name in allowed
    )


def tool_signature(tool: ToolSpec) -> str:
    """`- name(arg: type, ...): description`, then `    arg: what it is` per described
    argument (the JSON Schema line when the schema is not plain enough to write so)."""
    schema = tool.parameters or {}
    if not _plain(schema):
        return f"- {tool.name}: {tool.description}\n  Parameters: {_JSON.encode(schema)}"
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    arguments = ", ".join(
        _argument(name, prop, name in required) for name, prop in properties.items()
    )
    lines = [f"- {tool.name}({arguments}): {tool.description}".rstrip()]
    for name, prop in properties.items():
        description = prop.get("description") if isinstance(prop, Mapping) else None
        if description:
            lines.append(f"    {name}: {' '.join(str(description).split())}")
    return "\n".join(lines)


def _plain(schema: Mapping[str, Any]) -> bool:
    """An object schema of named arguments, each writable as a type (or a nested object,
    written as its JSON), and no references to resolve."""
    if any(key in schema for key in _NOT_PLAIN):
        return False
    if schema.get("type", "object") != "object":
        return False
    properties = schema.get("properties") or {}
    return isinstance(properties, Mapping) and all(
        isinstance(prop, Mapping) and not any(key in prop for key in _NOT_PLAIN)
        for prop in properties.values()
    )


def _argument(name: str, schema: Mapping[str, Any], required: bool) -> str:
    text = f"{name}: {type_text(schema)}"
    if "default" in schema:
        return f"{text} = {_JSON.encode(schema['default'])}"
    return text if required else f"{text} (optional)"


def type_text(schema: Mapping[str, Any]) -> str:
    """`number`, `string | null`, `"c" | "f"`, `array of string`, or an object's JSON."""
    if "enum" in schema:
        return " | ".join(_JSON.encode(value) for value in schema["enum"])
    if "const" in schema:
        return _JSON.encode(schema["const"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " | ".join(type_text(option) for option in schema[key])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(type_text({**schema, "type": one}) for one in kind)
    if kind == "array":
        items = schema.get("items")
        return f"array of {type_text(items)}" if isinstance(items, Mapping) and items else "array"
    if kind == "object" and schema.get("properties"):
        return _JSON.encode({k: v for k, v in schema.items() if k != "description"})
    return str(kind) if kind else "any"
