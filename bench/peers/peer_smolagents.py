"""smolagents' ToolCallingAgent with a scripted Model subclass (its documented extension point)."""

from __future__ import annotations

from typing import Any

from smolagents import ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    Model,
)

NAME = "smolagents"


class ScriptedModel(Model):
    def __init__(self, steps: int) -> None:
        super().__init__(model_id="scripted")
        self.steps = steps
        self.position = 0

    def generate(self, messages: list[Any], **kwargs: Any) -> ChatMessage:
        i = self.position
        self.position += 1
        if i < self.steps - 1:
            name, arguments = "add", {"a": i, "b": 1}
        else:
            name, arguments = "final_answer", {"answer": "done"}
        function = ChatMessageToolCallFunction(name=name, arguments=arguments)
        call = ChatMessageToolCall(id=f"c{i}", type="function", function=function)
        return ChatMessage(role="assistant", content="", tool_calls=[call])


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first number
        b: second number
    """
    return a + b


def run_once(steps: int) -> None:
    agent = ToolCallingAgent(
        tools=[add], model=ScriptedModel(steps), max_steps=steps + 5, verbosity_level=-1
    )
    assert agent.run("count") == "done"
