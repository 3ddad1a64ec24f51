"""LangGraph's prebuilt ReAct agent with langchain-core's fake chat model."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent

NAME = "LangGraph"


class ScriptedChatModel(GenericFakeChatModel):
    """The fake model, made to accept tools (it ignores them: the script decides)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(steps: int) -> Iterator[AIMessage]:
    for i in range(steps - 1):
        call = {"name": "add", "args": {"a": i, "b": 1}, "id": f"c{i}", "type": "tool_call"}
        yield AIMessage(content="", tool_calls=[call])
    yield AIMessage(content="done")


async def run_once(steps: int) -> None:
    agent = create_react_agent(ScriptedChatModel(messages=script(steps)), [add])
    state = await agent.ainvoke(
        {"messages": [("user", "count")]}, {"recursion_limit": 2 * steps + 10}
    )
    assert state["messages"][-1].content == "done"
