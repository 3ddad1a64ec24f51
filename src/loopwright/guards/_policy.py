"""Stop policies: small objects the loop consults; each stop names its reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

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


@dataclass
class GuardState:
    """What stop policies may look at (part of the loop's LoopState); policies only read it."""

    iteration: int = 0
    max_iterations: int = 10
    started_at: float = 0.0
    now: float = 0.0
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    model_name: str = ""
    next_input_tokens: int = 0
    largest_output_tokens: int = 0
    call_signatures: list[str] = field(default_factory=list)
    """`tool(canonical-json-args)` of every tool call, in order."""
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


class BasePolicy:
    """A policy that never stops; subclasses override one hook."""

    def before_model_call(self, state: GuardState) -> Stop | None:
        return None

    def after_tool_calls(self, state: GuardState) -> Stop | Nudge | None:
        return None
