"""loopwright: AgentExecutor with the ScriptedModel in native tool-calling mode."""

from __future__ import annotations

from loopwright import AgentExecutor, AgentOptions, ModelResponse, ToolCall, tool
from loopwright.testing import ScriptedModel

NAME = "loopwright"


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(steps: int) -> list[ModelResponse]:
    calls = [
        ModelResponse(tool_calls=(ToolCall(f"c{i}", "add", {"a": i, "b": 1}),))
        for i in range(steps - 1)
    ]
    return [*calls, ModelResponse(text="done")]


async def run_once(steps: int) -> None:
    model = ScriptedModel(script(steps), tool_mode="native")
    options = AgentOptions(max_iterations=steps + 1, no_progress_limit=steps + 1)
    result = await AgentExecutor(model, [add], options=options).run("count")
    assert result.success and len(result.steps) == steps - 1
