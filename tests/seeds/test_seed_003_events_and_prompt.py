"""Seed 003's progress events and system prompt on the native engine.

Seed lines held here:

- seed 003: "Emit `type: "tool_call"` progress events through existing WebSocket channel"
- seed 003: "Each event: `{tool_name, args_summary, result_summary, iteration_number}`"
- seed 003: "Describes available tools with usage instructions"
- seed 003: "Step-by-step task completion pattern for Qwen3 8B"
- seed 002 (its RULES): "Think step by step about how to accomplish the task", "If a tool
  fails, try an alternative approach", "Always respond with valid JSON in the format above"
"""

from __future__ import annotations

import json

import pytest

from loopwright.agent import AgentExecutor
from loopwright.events import Event, ToolCallEvent, encode_event
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool(effect="read")
def lookup(key: str) -> str:
    """Look a key up in the inventory.

    Args:
        key: the inventory key, e.g. "router-7"
    """
    return f"value of {key}"


async def test_each_tool_call_event_has_the_seeds_fields() -> None:
    """Seed 003: "Each event: `{tool_name, args_summary, result_summary,
    iteration_number}`", with the wire type `tool_call`."""
    reply = json.dumps({"thought": "t", "action": "lookup", "action_input": {"key": "router-7"}})
    model = ScriptedModel([reply, json.dumps({"final_answer": "found"})])
    events: list[Event] = []
    await AgentExecutor(model, [lookup]).run("find router-7", on_event=events.append)
    (call,) = [e for e in events if isinstance(e, ToolCallEvent)]
    wire = json.loads(encode_event(call))
    assert wire["type"] == "tool_call"
    assert {
        k: wire[k] for k in ("tool_name", "args_summary", "result_summary", "iteration_number")
    } == {
        "tool_name": "lookup",
        "args_summary": '{"key": "router-7"}',
        "result_summary": "value of router-7",
        "iteration_number": 1,
    }


@pytest.mark.parametrize("tool_mode", ["prompted", "native"])
async def test_the_system_prompt_describes_the_tools_and_the_step_by_step_rules(
    tool_mode: str,
) -> None:
    """Seed 003: "Describes available tools with usage instructions" and "Step-by-step task
    completion pattern"; seed 002's RULES, in both tool modes."""
    model = ScriptedModel(["done"], tool_mode=tool_mode)  # type: ignore[arg-type]
    await AgentExecutor(model, [lookup]).run("find router-7")
    system = model.requests[0].messages[0].content
    if tool_mode == "native":  # as JSON Schema, the way the tools travel natively
        assert "- lookup: Look a key up in the inventory." in system
        assert '"key": {"description": "the inventory key, e.g. \\"router-7\\""' in system
    else:  # as a signature, and a line per argument
        assert "- lookup(key: string): Look a key up in the inventory." in system
        assert '\n    key: the inventory key, e.g. "router-7"\n' in system
    for rule in (
        "- Think step by step about how to accomplish the task",
        "- Use tools to gather information and perform actions; never invent a tool's result",
        "- If a tool fails, try an alternative approach",
        "- Continue until the task is complete or you cannot make progress",
        "- Provide clear, actionable final answers",
    ):
        assert rule in system
    if tool_mode == "prompted":
        assert "- Always respond with one valid JSON object in the format above" in system
