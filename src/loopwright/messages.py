"""Provider-neutral conversation data: messages, tool calls, tool results, usage.

Plain typed data, no I/O. Every model adapter maps its wire format to and from these.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

Role = Literal["system", "user", "assistant", "tool"]

CHARS_PER_TOKEN = 4
"""Where tokens are estimated rather than counted by a tokenizer (the context window, a
reply whose server reports no usage, a scripted reply): ~4 characters a token."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One request from the model to run a tool."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        # The dataclass repr, written out: it is hashed into every request fingerprint,
        # and the generated one (with its recursion guard) is several times slower.
        name = type(self).__qualname__
        return f"{name}(id={self.id!r}, name={self.name!r}, arguments={self.arguments!r})"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(id=str(data["id"]), name=str(data["name"]), arguments=dict(data["arguments"]))


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    @classmethod
    def system(cls, content: str) -> Message:
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str, tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        return cls(role="assistant", content=content, tool_calls=tool_calls)

    @classmethod
    def tool(cls, content: str, tool_call_id: str, name: str) -> Message:
        return cls(role="tool", content=content, tool_call_id=tool_call_id, name=name)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            data["name"] = self.name
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        calls = tuple(ToolCall.from_dict(c) for c in data.get("tool_calls") or ())
        return cls(
            role=data["role"],
            content=data.get("content") or "",
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
        )


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens used by one or more model calls.

    `cached_input_tokens` is the part of `input_tokens` the provider took from its prompt
    cache instead of evaluating (llama.cpp's prefix cache, OpenAI's `cached_tokens`,
    Anthropic's cache reads); 0 when the provider does not say. It is written out only
    when set, so a reply without it has the same wire form as before it existed.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def evaluated_input_tokens(self) -> int:
        """Input tokens the model had to run through (not from a cache)."""
        return self.input_tokens - self.cached_input_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        data = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
        if self.cached_input_tokens:
            data["cached_input_tokens"] = self.cached_input_tokens
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(
            int(data.get("input_tokens", 0)),
            int(data.get("output_tokens", 0)),
            int(data.get("cached_input_tokens", 0)),
        )


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What a model is told about a tool: its name, purpose and JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The observation produced by running one tool call (already scrubbed)."""

    call_id: str
    tool_name: str
    content: str
    is_error: bool = False
    duration_ms: float = 0.0
    truncated: bool = False
    redactions: int = 0


class MessageHistory(Sequence[Message]):
    """The messages of one request, read-only: `first`, then the first `length` messages
    of `shared`, then `last` (when given).

    The agent loop makes one per model call without copying its conversation: `shared` is
    the conversation's own list, which only grows while a history of it is out (the
    conversation copies it before it rewrites an old message). A copy per call would make
    a step's cost grow with the run's length, and a model that keeps its requests
    (ScriptedModel) hold N² messages. It compares, hashes and slices as the tuple of
    its messages does.
    """

    __slots__ = ("_first", "_last", "_length", "_shared")

    def __init__(
        self, first: Message, shared: list[Message], length: int, last: Message | None = None
    ) -> None:
        self._first = first
        self._shared = shared
        self._length = length
        self._last = last

    def __len__(self) -> int:
        return self._length + 1 + (self._last is not None)

    def __iter__(self) -> Iterator[Message]:
        yield self._first
        yield from itertools.islice(self._shared, self._length)
        if self._last is not None:
            yield self._last

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        size = len(self)
        position = index + size if index < 0 else index
        if not 0 <= position < size:
            raise IndexError("message index out of range")
        if position == 0:
            return self._first
        if position <= self._length:
            return self._shared[position - 1]
        assert self._last is not None
        return self._last

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (MessageHistory, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: Sequence[Message]) -> tuple[Message, ...]:
        return (*self, *other)

    def __radd__(self, other: Sequence[Message]) -> tuple[Message, ...]:
        return (*other, *self)

    def __repr__(self) -> str:
        return f"MessageHistory({tuple(self)!r})"


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything a model adapter needs for one call.

    `tools` is filled only in native tool-calling mode; in prompted mode the tools are
    described inside the system prompt and `tools` is empty.
    """

    messages: Sequence[Message]
    """A tuple, or the loop's `MessageHistory` (read-only, no copy of the conversation)."""
    tools: tuple[ToolSpec, ...] = ()
    temperature: float | None = None
    max_output_tokens: int | None = None
    json_output: bool = False
    output_schema: dict[str, Any] | None = None
    """A JSON Schema the reply's text must match, for backends that can constrain their
    output (structured output); others are told the format in the prompt."""
    stop_at_action: bool = False
    """End the reply once its first complete action is written (a call or a final answer,
    as loopwright.parsing reads it): the model stops generating there, and the reply's
    `finish_reason` is `"action_complete"`. The agent asks it when it reads replies with the
    default parser chain (it uses the first action only)."""
    calls_in_a_row: bool = False
    """With `stop_at_action`: JSON calls written one after the other stay whole, and the
    reply ends after the last of them (the agent asks it when a prompted reply may carry
    several calls, `AgentOptions.max_calls_per_reply`)."""


@dataclass(frozen=True, slots=True)
class ModelTimings:
    """Where a model call's time went, from a backend that knows (the embedded model):
    loading the model, waiting for its turn while another run used it, evaluating the
    prompt, generating the reply; and the threads it ran on. Milliseconds. A reply carries
    them in `timings`, written only when known, so other replies keep their wire form."""

    load_ms: float = 0.0
    wait_ms: float = 0.0
    prompt_ms: float = 0.0
    generate_ms: float = 0.0
    threads: int = 0

    def to_dict(self) -> dict[str, float]:
        data: dict[str, float] = {
            name: round(float(getattr(self, name)), 1)
            for name in ("load_ms", "wait_ms", "prompt_ms", "generate_ms")
            if getattr(self, name)
        }
        if self.threads:
            data["threads"] = self.threads
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelTimings:
        return cls(
            float(data.get("load_ms", 0.0)),
            float(data.get("wait_ms", 0.0)),
            float(data.get("prompt_ms", 0.0)),
            float(data.get("generate_ms", 0.0)),
            int(data.get("threads", 0)),
        )


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One reply from a model, provider-neutral."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None
    timings: ModelTimings | None = None
    """Where the call's time went, when the backend says (the embedded model)."""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "text": self.text,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "usage": self.usage.to_dict(),
            "model": self.model,
            "finish_reason": self.finish_reason,
        }
        if self.timings is not None:
            data["timings"] = self.timings.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelResponse:
        return cls(
            text=data.get("text") or "",
            tool_calls=tuple(ToolCall.from_dict(c) for c in data.get("tool_calls") or ()),
            usage=Usage.from_dict(data.get("usage") or {}),
            model=data.get("model") or "",
            finish_reason=data.get("finish_reason"),
            timings=ModelTimings.from_dict(data["timings"]) if data.get("timings") else None,
        )
