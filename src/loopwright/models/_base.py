"""The one Model protocol every adapter implements."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from loopwright.messages import ModelRequest, ModelResponse

ToolMode = Literal["native", "prompted"]


@runtime_checkable
class Model(Protocol):
    """Anything that turns a conversation into one reply.

    `name` is the model spec shown in events (`scripted:echo.json`, `ollama:qwen3:8b`).
    `preferred_tool_mode` says whether the agent should pass tools natively or describe
    them in the prompt; the agent may be told otherwise.
    """

    @property
    def name(self) -> str: ...

    @property
    def preferred_tool_mode(self) -> ToolMode: ...

    async def complete(self, request: ModelRequest) -> ModelResponse: ...
