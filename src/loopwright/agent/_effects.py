"""Recorded effects: what a previous process of this run already did.

On resume (and replay) the loop runs again from the start. Every event it would emit
with a `seq` already in the log is checked against the recorded one instead of being
emitted again; model calls and finished tool calls are served from the log, so nothing
that completed is repeated.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from loopwright.errors import ReplayDivergence
from loopwright.events import Event, ModelResponded, ToolCallFinished, ToolCallStarted
from loopwright.messages import ModelResponse, ToolResult


def _describe(event: Event) -> str:
    if isinstance(event, ToolCallStarted):
        return f"call {event.tool_name}({json.dumps(event.arguments, sort_keys=True)})"
    if isinstance(event, ModelResponded):
        return f"model request {event.request_digest} at iteration {event.iteration}"
    return event.type


@dataclass
class RecordedEffects:
    """The events of an earlier process of the same run."""

    events: list[Event] = field(default_factory=list)
    model_responses: deque[ModelResponse] = field(default_factory=deque)
    tool_results: dict[str, ToolResult] = field(default_factory=dict)
    started_tools: set[str] = field(default_factory=set)

    @classmethod
    def from_events(cls, events: Sequence[Event]) -> RecordedEffects:
        if not events:
            return _NOTHING  # nothing to serve: a fresh run
        recorded = cls(events=list(events))
        for event in events:
            if isinstance(event, ModelResponded):
                recorded.model_responses.append(ModelResponse.from_dict(event.response))
            elif isinstance(event, ToolCallStarted):
                recorded.started_tools.add(event.call_id)
            elif isinstance(event, ToolCallFinished):
                recorded.tool_results[event.call_id] = ToolResult(
                    call_id=event.call_id,
                    tool_name=event.tool_name,
                    content=event.result,
                    is_error=event.is_error,
                    duration_ms=event.duration_ms,
                    truncated=event.truncated,
                    redactions=event.redactions,
                )
        return recorded

    @property
    def last_seq(self) -> int:
        return len(self.events)

    def check(self, event: Event) -> None:
        """Raise ReplayDivergence if `event` differs in substance from the recorded one."""
        recorded = self.events[event.seq - 1]
        if _describe(recorded) != _describe(event) or recorded.type != event.type:
            raise ReplayDivergence(event.seq, _describe(recorded), _describe(event))

    def next_model_response(self) -> ModelResponse | None:
        return self.model_responses.popleft() if self.model_responses else None

    def interrupted(self, call_id: str) -> bool:
        """The call had started in the earlier process but has no recorded result."""
        return call_id in self.started_tools and call_id not in self.tool_results


_NOTHING = RecordedEffects()
"""A fresh run's (shared: with no events, nothing in it is ever taken or changed)."""
