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


def tool_reply_schema(specs: Sequence[ToolSpec]) -> dict[str, Any]:
    """One of the run's tools with its arguments, or a final answer (a string)."""
    calls = [
        {
            "type": "object",
            "properties": {
                "thought": {"type": "string"},
                "action": {"const": spec.name},
                "action_input": _arguments(spec.parameters),
                "is_final": {"const": False},
            },
            "required": ["thought", "action", "action_input"],
            "additionalProperties": False,
        }
        for spec in specs
    ]
    return {"anyOf": [*calls, final_reply_schema()]}


def final_reply_schema() -> dict[str, Any]:
    """A final answer only (a run's last turn: no tool may be named)."""
    return {
        "type": "object",
        "properties": {
            "thought": {"type": "string"},
            "final_answer": {"type": "string"},
            "is_final": {"const": True},
        },
        "required": ["thought", "final_answer"],
        "additionalProperties": False,
    }
