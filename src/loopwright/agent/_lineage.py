"""Where a run comes from: the turn it follows in a conversation, the run it forks.

- A **follow-up** (`after=`) is a new run whose transcript starts with the whole
  transcript of the turn before it (requests, replies, observations, answers), under the
  same system prompt: each request it sends begins with what the model saw before, so a
  prompt cache reuses it. `run_started.after_run_id` links the two runs.
- A **fork** (`fork_of=(run, step)`) is a new run whose first `step` steps (iterations, as
  `runs show` numbers them) are served from the old run's effects: its model replies,
  tool results and approval decisions, none made again; then it runs live.
  `run_started.fork_of` names the run and the step. A fork of a follow-up follows the
  same turn.

In one process a result carries what both need (`RunMemory`); across processes they are
read from the run store (runtime/_turns.py).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loopwright.agent._approval import approval_request_id
from loopwright.agent._conversation import Transcript
from loopwright.effects import GateVerdict, Recording
from loopwright.errors import ForkError
from loopwright.events import (
    Event,
    IterationStartedEvent,
    ModelResponseEvent,
    VerificationEvent,
)
from loopwright.messages import ModelResponse, ToolResult


@dataclass(frozen=True, slots=True)
class ForkPoint:
    """A run and a step of it: a fork takes the run's first `step` steps."""

    run_id: str
    step: int

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "step": self.step}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ForkPoint:
        return cls(str(data["run_id"]), int(data["step"]))


@dataclass(frozen=True, slots=True)
class Lineage:
    """What a run takes from runs before it (nothing, for a run of its own)."""

    after_run_id: str | None = None
    """The turn this run follows (recorded in its run_started)."""
    history: Transcript | None = None
    """The transcript of that turn at its end: this run's starts with it."""
    workspace_section: str | None = None
    """The workspace section that turn's prompt had: one system prompt per conversation."""
    fork_of: ForkPoint | None = None
    served: Recording | None = None
    """A fork: the old run's effects of its first steps, served before anything is live."""

    def to_dict(self) -> dict[str, Any]:
        """What run_started records of it."""
        fork = self.fork_of.to_dict() if self.fork_of is not None else None
        return {"after_run_id": self.after_run_id, "fork_of": fork}


NO_LINEAGE = Lineage()


@dataclass(slots=True)
class RunMemory:
    """What a run keeps in memory for a follow-up or a fork made from its result: where it
    began, and each effect it took, by step."""

    lineage: Lineage
    workspace_section: str
    transcript: Transcript | None = None
    """At the run's end."""
    replies: list[tuple[int, ModelResponse]] = field(default_factory=list)
    results: dict[str, tuple[int, ToolResult]] = field(default_factory=dict)
    verdicts: dict[str, tuple[int, GateVerdict]] = field(default_factory=dict)
    """Approval decisions, by the call they were asked for."""

    def follow_up(self, run_id: str) -> Lineage:
        """The lineage of a turn after this run."""
        if self.transcript is None:
            raise AssertionError("a run's memory has its transcript once it has ended")
        return Lineage(run_id, self.transcript, self.workspace_section)

    def fork(self, run_id: str, step: int, iterations: int, new_run_id: str) -> Lineage:
        """The lineage of a fork of this run (`run_id`, `iterations` steps) at `step`."""
        check_step(run_id, step, iterations)
        recording = Recording(events=[])
        recording.model_responses = deque(r for n, r in self.replies if n <= step)
        recording.tool_results = {k: r for k, (n, r) in self.results.items() if n <= step}
        recording.gate_verdicts = {
            approval_request_id(new_run_id, call_id): verdict
            for call_id, (n, verdict) in self.verdicts.items()
            if n <= step
        }
        begun = self.lineage
        return Lineage(
            begun.after_run_id,
            begun.history,
            self.workspace_section,
            ForkPoint(run_id, step),
            recording,
        )


def check_step(run_id: str, step: int, steps: int) -> None:
    """A ForkError unless `step` is one of the run's (0: none kept, up to its last)."""
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= steps:
        raise ForkError(
            f"cannot fork run {run_id} at step {step!r}: it has {steps} step(s), "
            f"fork at 0 to {steps}"
        )


def fork_recording(events: Sequence[Event], step: int, new_run_id: str) -> Recording:
    """The effects of the first `step` steps of the run `events`, for the fork
    `new_run_id`: its approval decisions under the fork's gate ids (the same calls)."""
    old_run_id = events[0].run_id if events else ""
    steps = max(
        (e.iteration_number for e in events if isinstance(e, IterationStartedEvent)), default=0
    )
    check_step(old_run_id, step, steps)
    cut = next(
        (
            index
            for index, event in enumerate(events)
            if isinstance(event, IterationStartedEvent) and event.iteration_number == step + 1
        ),
        len(events),
    )
    kept = [e for e in events[:cut] if not isinstance(e, VerificationEvent)]
    recording = Recording.of(kept)
    call_ids = [
        str(action.get("id"))
        for event in kept
        if isinstance(event, ModelResponseEvent)
        for action in event.actions
    ]
    recording.gate_verdicts = {  # under the fork's ids without its log's keyed part
        approval_request_id(new_run_id, call_id): verdict
        for call_id in call_ids
        if (verdict := _recorded_verdict(recording, approval_request_id(old_run_id, call_id)))
    }
    return recording


def _recorded_verdict(recording: Recording, base: str) -> GateVerdict | None:
    """The decision the old run recorded at the gate made from `base` (its id is `base`, or
    `base` and a keyed part: `EventLog.gate_id`)."""
    for gate_id, verdict in recording.gate_verdicts.items():
        if gate_id == base or gate_id.startswith(base + "_"):
            return verdict
    return None


def recording_of(own: Sequence[Event], served: Recording | None) -> Recording | None:
    """What a run's effects are served from before they are live: its own recorded events
    (a resume), then what of a fork's `served` first steps they do not hold yet (a fork's
    log holds copies of those it took); None: nothing, all is live."""
    if served is None:
        return Recording.of(own) if own else None
    recording = Recording.of(own)
    taken = len(recording.model_responses)
    recording.model_responses.extend(list(served.model_responses)[taken:])
    for call_id, result in served.tool_results.items():
        recording.tool_results.setdefault(call_id, result)
    for request_id, verdict in served.gate_verdicts.items():
        recording.gate_verdicts.setdefault(request_id, verdict)
    return recording


def lineage_payload(lineage: Lineage) -> dict[str, Any]:
    """A lineage as plain JSON data (what a Temporal worker hands its workflow)."""
    served = lineage.served
    return {
        **lineage.to_dict(),
        "workspace_section": lineage.workspace_section,
        "history": lineage.history.to_dict() if lineage.history is not None else None,
        "served": None
        if served is None
        else {
            "model_responses": [r.to_dict() for r in served.model_responses],
            "tool_results": {k: dataclasses.asdict(r) for k, r in served.tool_results.items()},
            "gate_verdicts": {k: dataclasses.asdict(v) for k, v in served.gate_verdicts.items()},
        },
    }


def lineage_from_payload(data: dict[str, Any]) -> Lineage:
    """`lineage_payload`'s inverse."""
    history = data.get("history")
    served_data = data.get("served")
    served = None
    if served_data is not None:
        served = Recording(events=[])
        served.model_responses = deque(
            ModelResponse.from_dict(r) for r in served_data["model_responses"]
        )
        served.tool_results = {k: ToolResult(**r) for k, r in served_data["tool_results"].items()}
        served.gate_verdicts = {
            k: GateVerdict(**v) for k, v in served_data["gate_verdicts"].items()
        }
    fork = data.get("fork_of")
    return Lineage(
        after_run_id=data.get("after_run_id"),
        history=Transcript.from_dict(history) if history is not None else None,
        workspace_section=data.get("workspace_section"),
        fork_of=ForkPoint.from_dict(fork) if fork is not None else None,
        served=served,
    )
