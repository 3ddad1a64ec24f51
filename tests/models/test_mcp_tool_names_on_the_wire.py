"""MCP tools whose names clash (two servers offering `multiply`) reach each provider under a
name its native tool calling accepts, and the model's call of that name reaches the right
server: a whole run through each adapter's wire format, against real MCP server processes."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from model_helpers import Wire, make_model

from loopwright.agent import AgentExecutor
from loopwright.mcp import MCPConnections

pytestmark = pytest.mark.subprocess

SERVER = Path(__file__).parents[2] / "examples" / "mcp_server.py"
STDIO = f"{sys.executable} {SERVER}"
NATIVE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""OpenAI's function name pattern; Anthropic's tool name pattern is the same."""


def _names(provider: str, body: dict[str, Any]) -> list[str]:
    if provider == "anthropic":
        return [tool["name"] for tool in body["tools"]]
    return [tool["function"]["name"] for tool in body["tools"]]


def _tool_call(provider: str, name: str) -> dict[str, Any]:
    arguments = {"a": 6, "b": 7}
    if provider == "openai":
        call = {"id": "c1", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip
        return {"choices": [{"message": {"role": "assistant", "content": None,
                                          "tool_calls": [call]}}]}  # fmt: skip
    if provider == "anthropic":
        use = {"type": "tool_use", "id": "t1", "name": name, "input": arguments}
        return {"type": "message", "content": [use], "stop_reason": "tool_use"}
    call = {"function": {"name": name, "arguments": arguments}}
    return {"message": {"role": "assistant", "content": "", "tool_calls": [call]}, "done": True}


def _answer(provider: str) -> dict[str, Any]:
    if provider == "openai":
        return {"choices": [{"message": {"role": "assistant", "content": "42"}}]}
    if provider == "anthropic":
        return {"type": "message", "content": [{"type": "text", "text": "42"}]}
    return {"message": {"role": "assistant", "content": "42"}, "done": True}


def _model_calls(provider: str, sent: list[list[str]]) -> Callable[[httpx.Request], httpx.Response]:
    """The provider's reply: it checks the names as the provider does, then calls the second
    server's `multiply` by the name it was given."""

    def reply(request: httpx.Request) -> httpx.Response:
        names = _names(provider, json.loads(request.content))
        sent.append(names)
        bad = [name for name in names if not NATIVE_NAME.fullmatch(name)]
        if bad:  # as the provider answers an invalid tool name
            return httpx.Response(400, json={"error": {"message": f"invalid tool names {bad}"}})
        [second] = [name for name in names if name.startswith("notes-2") and "multiply" in name]
        return httpx.Response(200, json=_tool_call(provider, second))

    return reply


async def test_clashing_mcp_tools_are_named_as_every_provider_accepts() -> None:
    async with MCPConnections([STDIO, STDIO], call_timeout_s=30) as servers:
        for provider in ("openai", "anthropic", "ollama"):
            sent: list[list[str]] = []
            wire = Wire(_model_calls(provider, sent), httpx.Response(200, json=_answer(provider)))
            model = make_model(provider, wire, tool_mode="native")
            result = await AgentExecutor(model, servers.tools()).run("6 times 7?")
            assert result.success, (provider, result)
            assert {"notes__multiply", "notes-2__multiply"} <= set(sent[0])
            assert "multiply" not in sent[0]
            [step] = result.steps
            assert (step.tool_name, step.result) == ("notes-2__multiply", "42"), provider
            assert result.answer == "42"
