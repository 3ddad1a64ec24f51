"""The schema of a prompted reply, for backends that constrain their output to one.

In prompted mode the model writes `{"thought", "action", "action_input", "is_final": false}`
or `{"thought", "final_answer", "is_final": true}` (`is_final` may be left out).
Constrained to this schema (llama.cpp turns it into a grammar) it can only name a tool the
run has, with that tool's arguments, or answer: the decision is in the grammar, not only
the syntax. Opt-in with `AgentOptions(reply_grammar=True)`; measured on the eval suite in
docs/models.md.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from loopwright.messages import ToolSpec


def _arguments(parameters: dict[str, Any]) -> dict[str, Any]:
    """A tool's argument schema, closed: no argument the tool does not take."""
    schema: dict[str, Any] = copy.deepcopy(parameters) if parameters else {"type": "object"}
    if schema.get("type") == "object" and "properties" in schema:
        schema.setdefault("additionalProperties", False)
    return schema


def tool_reply_schema(specs: Sequence[ToolSpec], *, is_final: bool = True) -> dict[str, Any]:
    """One of the run's tools with its arguments, or a final answer (a string); with
    `is_final` (not in runs recorded with RunSpec 1 to 3)."""
    calls = []
    for spec in specs:
        properties = {
            "thought": {"type": "string"},
            "action": {"const": spec.name},
            "action_input": _arguments(spec.parameters),
        }
        if is_final:
            properties["is_final"] = {"const": False}
        calls.append(
            {
                "type": "object",
                "properties": properties,
                "required": ["thought", "action", "action_input"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": [*calls, final_reply_schema(is_final=is_final)]}


def final_reply_schema(*, is_final: bool = True) -> dict[str, Any]:
    """A final answer only (a run's last turn: no tool may be named)."""
    properties: dict[str, Any] = {"thought": {"type": "string"}, "final_answer": {"type": "string"}}
    if is_final:
        properties["is_final"] = {"const": True}
    return {
        "type": "object",
        "properties": properties,
        "required": ["thought", "final_answer"],
        "additionalProperties": False,
    }
