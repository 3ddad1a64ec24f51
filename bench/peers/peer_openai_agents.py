"""The OpenAI Agents SDK with a scripted `Model` (its documented extension point)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Model, ModelResponse, RunConfig, Runner, function_tool
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

NAME = "OpenAI Agents SDK"


class ScriptedModel(Model):
    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.position = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        i = self.position
        self.position += 1
        if i < self.steps - 1:
            item: Any = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"c{i}",
                name="add",
                arguments=json.dumps({"a": i, "b": 1}),
            )
        else:
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            item = ResponseOutputMessage(
                id=f"m{i}", type="message", role="assistant", status="completed", content=[text]
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the benchmark does not stream")


@function_tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def run_once(steps: int) -> None:
    agent = Agent(name="counter", model=ScriptedModel(steps), tools=[add])
    config = RunConfig(tracing_disabled=True)
    result = await Runner.run(agent, "count", max_turns=steps + 5, run_config=config)
    assert result.final_output == "done"
