"""An agent on any OpenAI-compatible server: llama.cpp's server, vLLM, LM Studio, Ollama's /v1.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 python examples/openai_compatible.py
    OPENAI_BASE_URL=... MODEL=qwen TOOL_MODE=native python examples/openai_compatible.py "6 * 7?"

A server on this machine needs no key; elsewhere set OPENAI_API_KEY. TOOL_MODE is
`prompted` (tools described in the system prompt; the default for servers other than
api.openai.com) or `native` (the server's own tool calling). STREAM=1 streams the replies.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Literal

from loopwright import AgentExecutor
from loopwright.events import RunFinishedEvent, ToolCallEvent
from loopwright.models import OpenAIModel
from loopwright.tools import tool


@tool(effect="read")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(effect="read")
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def _tool_mode() -> Literal["native", "prompted"] | None:
    mode = os.environ.get("TOOL_MODE")
    if mode in ("native", "prompted"):
        return mode  # type: ignore[return-value]
    return None


async def main(request: str) -> int:
    model = OpenAIModel(
        os.environ.get("MODEL", "default"),
        base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"),
        tool_mode=_tool_mode(),
        stream=os.environ.get("STREAM") == "1",
    )
    agent = AgentExecutor(model, [add, multiply])
    async for event in agent.stream(request):
        if isinstance(event, ToolCallEvent):
            print(f"tool: {event.tool_name} {json.dumps(event.arguments)} -> {event.result}")
        elif isinstance(event, RunFinishedEvent):
            print(f"{event.status}: {event.answer or event.reason}")
            print(f"tokens: {event.usage['input_tokens']} in, {event.usage['output_tokens']} out")
            return 0 if event.status == "completed" else 1
    return 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(" ".join(sys.argv[1:]) or "What is (17 + 25) * 2?")))
