"""Pydantic AI with its FunctionModel (a scripted model facility shipped with the library)."""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

NAME = "Pydantic AI"


def scripted(steps: int) -> FunctionModel:
    calls = iter(range(steps))

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        i = next(calls)
        if i < steps - 1:
            return ModelResponse(parts=[ToolCallPart("add", {"a": i, "b": 1}, f"c{i}")])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def run_once(steps: int) -> None:
    agent: Agent[None, str] = Agent(scripted(steps), tools=[add])
    result = await agent.run("count", usage_limits=UsageLimits(request_limit=steps + 5))
    assert result.output == "done"
