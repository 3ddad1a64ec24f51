"""Prompted mode lists tools as signatures (prompt revision 3): every fact of a plain schema
is in the signature, and a schema it cannot write plainly keeps its JSON line."""

from __future__ import annotations

import json
from typing import Literal

from loopwright.messages import ToolSpec
from loopwright.prompts import PromptBuilder, PromptParts
from loopwright.prompts._signatures import tool_signature, tool_signatures
from loopwright.tools import tool


@tool
def convert(
    amount: float, to: Literal["EUR", "USD"], note: str = "", tags: list[str] | None = None
) -> str:
    """Convert money.

    Args:
        amount: how much money
        to: the currency to convert to
    """
    return f"{amount} {to}"


def test_a_plain_schema_becomes_a_signature_with_every_fact() -> None:
    text = tool_signature(convert.spec)
    head, *described = text.splitlines()
    assert head.startswith('- convert(amount: number, to: "EUR" | "USD", note: string = ""')
    assert "tags: array of string | null (optional)" in head
    assert head.endswith("): Convert money.")
    assert described == ["    amount: how much money", "    to: the currency to convert to"]


def test_optional_arguments_without_a_default_say_so() -> None:
    spec = ToolSpec(
        "find",
        "Find a thing.",
        {
            "type": "object",
            "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["q"],
        },
    )
    assert tool_signature(spec) == "- find(q: string, limit: integer (optional)): Find a thing."


def test_a_schema_with_references_keeps_its_json_line() -> None:
    parameters = {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/Item"}},
        "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "integer"}}}},
    }
    text = tool_signature(ToolSpec("add_item", "Add an item.", parameters))
    head, line = text.splitlines()
    assert head == "- add_item: Add an item."
    assert json.loads(line.removeprefix("  Parameters: ")) == parameters


def test_a_nested_object_is_written_as_its_schema() -> None:
    address = {"type": "object", "properties": {"city": {"type": "string"}}}
    spec = ToolSpec(
        "ship",
        "Ship it.",
        {"type": "object", "properties": {"to": {**address, "description": "where"}}},
    )
    head, described = tool_signature(spec).splitlines()
    inner = head[len("- ship(to: ") : head.index(" (optional)")]
    assert json.loads(inner) == address
    assert described == "    to: where"


def test_allowed_tools_filter_the_list() -> None:
    other = ToolSpec("other", "Other.", {})
    assert tool_signatures([convert.spec, other], ["other"]) == "- other(): Other."


def test_the_default_prompt_lists_signatures_and_a_template_of_ones_own_json_lines() -> None:
    parts = PromptParts(tools=(convert.spec,), tool_mode="prompted")
    assert "- convert(amount: number" in PromptBuilder().build(parts)
    own = PromptBuilder("{tool_descriptions}").build(parts)
    assert own.startswith("- convert: Convert money.\n  Parameters: {")
    native = PromptBuilder().build(PromptParts(tools=(convert.spec,), tool_mode="native"))
    assert "- convert: Convert money.\n  Parameters: {" in native
    revision_2 = PromptBuilder().build(PromptParts(tools=(convert.spec,), revision=2))
    assert "- convert: Convert money.\n  Parameters: {" in revision_2
