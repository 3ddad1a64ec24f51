"""Stop policies: small objects the loop consults; each stop names its reason."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from loopwright.messages import Usage


@dataclass(frozen=True, slots=True)
class Stop:
    """End the run. `reason` is machine-readable; `message` is a sentence for people."""

    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Nudge:
    """Keep going, but tell the model something (appended to the observation)."""

    message: str


class CallSignature:
    """A tool call as the repetition check compares it: equal when the tool and the
    arguments are (dicts compare whatever their key order); `str()` gives
    `tool({"a": 1})` with the arguments as canonical JSON, made only when shown."""

    __slots__ = ("arguments", "tool_name")

    def __init__(self, tool_name: str, arguments: dict[str, Any]) -> None:
        self.tool_name = tool_name
        self.arguments = arguments

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CallSignature):
            return NotImplemented
        return self.tool_name == other.tool_name and self.arguments == other.arguments

    __hash__ = None  # type: ignore[assignment]  # arguments are a dict

    def arguments_json(self) -> str:
        """The arguments as canonical JSON (sorted keys; what is not JSON as its str)."""
        return _CANONICAL.encode(self.arguments)

    def __str__(self) -> str:
        return f"{self.tool_name}({self.arguments_json()})"

    def __repr__(self) -> str:
        return f"CallSignature({self!s})"


_CANONICAL = json.JSONEncoder(sort_keys=True, default=str)


@dataclass(slots=True)
class GuardState:
    """What stop policies may look at (part of the loop's LoopState); policies only read it."""

    iteration: int = 0
    max_iterations: int = 10
    """The run's hard limit: on iterations, and on model calls (a correction is one too)."""
    model_calls: int = 0
    hard_limit: bool = True
    """The limit counts model calls too (revision 2); revision 1 counted iterations only."""
    started_at: float = 0.0
    now: float = 0.0
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    model_name: str = ""
    next_input_tokens: int = 0
    largest_output_tokens: int = 0
    call_signatures: list[CallSignature] = field(default_factory=list)
    """Every tool call, in order: equal when the tool and its arguments are; its text is
    `tool(canonical-json-args)`."""
    unknown_tool_calls: list[bool] = field(default_factory=list)
    """Per tool call, in order: did it name a tool the run does not have?"""
    new_observation: list[bool] = field(default_factory=list)
    """Per iteration with tool calls: did it produce an observation never seen before?"""
    workspace_changes: int = 0
    workspace_changed: list[bool] = field(default_factory=list)

    @property
    def elapsed(self) -> float:
        return self.now - self.started_at


class StopPolicy(Protocol):
    """Checked before each model call and after each round of tool calls."""

    def before_model_call(self, state: GuardState) -> Stop | None: ...

    def after_tool_calls(self, state: GuardState) -> Stop | Nudge | None: ...


PolicyHook = Callable[[GuardState], "Stop | Nudge | None"]
"""One policy's `before_model_call` or `after_tool_calls`, bound (what the loop calls)."""


class BasePolicy:
    """A policy that never stops; subclasses override one hook."""

    def before_model_call(self, state: GuardState) -> Stop | None:
        return None

    def after_tool_calls(self, state: GuardState) -> Stop | Nudge | None:
        return None
