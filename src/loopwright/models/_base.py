"""The one Model protocol every adapter implements."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol, runtime_checkable

from loopwright.messages import ModelRequest, ModelResponse

ToolMode = Literal["native", "prompted"]
TextSink = Callable[[str], None]
"""Called with each piece of text as a streamed reply arrives."""


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


@runtime_checkable
class StreamsText(Protocol):
    """A model that can hand out its reply's text as it is generated (token streaming).

    `complete_streaming` returns the same complete reply as `complete` (tool calls are
    read from it, never from the pieces) and calls `on_text` with each piece of text on
    the way, in this event loop's thread. The run calls it only when someone listens to
    the run's events; otherwise it calls `complete`.
    """

    async def complete_streaming(
        self, request: ModelRequest, on_text: TextSink
    ) -> ModelResponse: ...


@runtime_checkable
class KnowsContextWindow(Protocol):
    """A model that knows how many tokens it reads at most, prompt and reply together (the
    embedded model: the context it was loaded with). Checked before a run whose prompt
    alone could not fit (a skill too big for the model)."""

    def context_window(self) -> int | None: ...


def context_window_of(model: Model) -> int | None:
    """The model's context window in tokens, when it says; else None."""
    return model.context_window() if isinstance(model, KnowsContextWindow) else None
