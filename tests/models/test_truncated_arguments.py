"""A native tool call whose arguments were cut off (the reply hit the output limit) is
repaired and run as a native call, over a real adapter (issue 21)."""

from __future__ import annotations

from model_helpers import Wire, json_reply, make_model

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.tools import tool


@tool(effect="read")
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_a_run_over_http_uses_the_repaired_native_call() -> None:
    """OpenAI-compatible server, the reply cut off by the output limit mid-arguments."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a": 2, "b": 3'},
    }
    first = {
        "choices": [
            {
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "length",
            }
        ]
    }
    second = {
        "choices": [{"message": {"role": "assistant", "content": "5"}, "finish_reason": "stop"}]
    }
    wire = Wire(json_reply(first), json_reply(second))
    model = make_model("openai", wire, tool_mode="native")
    result = await AgentExecutor(model, [add], options=AgentOptions(tool_mode="native")).run(
        "2 + 3?"
    )
    assert (result.status, result.answer) == ("completed", "5")
    assert [(s.tool_name, s.arguments, s.result) for s in result.steps] == [
        ("add", {"a": 2, "b": 3}, "5")
    ]
    tool_turn = wire.bodies[1]["messages"][-1]
    assert (tool_turn["role"], tool_turn["tool_call_id"]) == ("tool", "call_1")
    assert tool_turn["content"].startswith("5")
