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


@runtime_checkable
class ChecksUse(Protocol):
    """A model that can tell, when a run ends, whether it was used as intended.

    The agent calls `check_used` after every run; ScriptedModel raises there when a
    completed run left some of its replies unused.
    """

    def check_used(self, *, completed: bool) -> None: ...


@runtime_checkable
class ResumesScript(Protocol):
    """A model that replies from a fixed script (ScriptedModel): on resume it is told how
    many of its replies the run's log already served, so it goes on after them."""

    def resume_after(self, replies: int) -> None: ...
