"""What a parser makes of a model reply: an action, a final answer, or a failure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from loopwright.messages import ModelResponse, ToolCall


@dataclass(frozen=True, slots=True)
class ParsedAction:
    """One or more tool calls the model asked for."""

    calls: tuple[ToolCall, ...]
    thought: str | None = None
    kind: Literal["action"] = "action"

    def to_dict(self) -> dict[str, Any]:
        actions = [{"tool": c.name, "arguments": c.arguments} for c in self.calls]
        return {"kind": self.kind, "thought": self.thought, "actions": actions}


@dataclass(frozen=True, slots=True)
class ParsedFinal:
    """The model's final answer."""

    answer: str
    thought: str | None = None
    kind: Literal["final"] = "final"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "thought": self.thought, "answer": self.answer}


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """The reply could not be read; `message` says what was wrong, for the model."""

    message: str
    kind: Literal["error"] = "error"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message}


ParseOutcome = ParsedAction | ParsedFinal | ParseFailure


class ReplyParser(Protocol):
    """One layer of the chain: returns an outcome, or None for "not mine"."""

    name: str

    def parse(self, response: ModelResponse) -> ParseOutcome | None: ...
