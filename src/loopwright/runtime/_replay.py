"""Replay a finished agent run against the current code (`loopwright runs replay`).

The recorded model replies are served to the current code, no tool runs (their recorded
results are reused), the recorded verification outcome is reused; the first event where
the code now does something else is reported (`ReplayReport`).

Past what the run recorded the replay performs nothing (`_RecordingOnly`): a call the
recording does not answer is a divergence, except in a run its wall clock stopped. There
the clock is not the code's doing: the replay's clock reads past the limit where the run's
did, and the call the clock cut off times out again, so the stop is replayed, not reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.effects import Effects, GateRequest, GateVerdict, ReplayEffects
from loopwright.effects._protocol import ToolInvocation
from loopwright.effects._wrapped import WrappedEffects
from loopwright.errors import ReplayDivergence, UsageError
from loopwright.events import (
    Event,
    IterationStartedEvent,
    RunStartedEvent,
    RunStoppedEvent,
    ToolCallStartedEvent,
)
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model
from loopwright.models._scripted import stand_in_model
from loopwright.runtime._spec import RunSpec, build_agent, recorded_spec
from loopwright.runtime._turns import replayed_lineage
from loopwright.store import RunStore
from loopwright.store._base import FINISHED, find_run

AgentFactory = Callable[[RunSpec, Model], AgentExecutor]
CLOCK_STOPS = ("timeout", "iteration_timeout")
"""The stop reasons of a run's wall clock (the whole run's, one iteration's)."""


@dataclass(frozen=True)
class ReplayReport:
    run_id: str
    events: int
    """How many recorded events the replay checked."""
    divergence: ReplayDivergence | None = None
    iteration: int | None = None
    """The iteration (step) of the loop where the replay diverged."""

    @property
    def ok(self) -> bool:
        return self.divergence is None

    def describe(self) -> str:
        if self.divergence is None:
            return f"run {self.run_id}: replayed {self.events} events, no divergence"
        step = f" (iteration {self.iteration})" if self.iteration is not None else ""
        return f"run {self.run_id}: {self.divergence}{step}"


def _iteration_at(events: Sequence[Event], seq: int) -> int | None:
    iteration = None
    for event in events[: max(0, min(seq, len(events)))]:
        if isinstance(event, IterationStartedEvent):
            iteration = event.iteration_number
    return iteration


def _what(event: Event) -> str:
    if isinstance(event, ToolCallStartedEvent):
        return f"call {event.tool_name}"
    return event.type


async def replay_run(
    store: RunStore, run_id: str, *, build: AgentFactory | None = None
) -> ReplayReport:
    """Re-run a finished agent run against its recorded effects; report any divergence.

    `build` makes the agent from the recorded spec and a stand-in model (default:
    `build_agent`); the stand-in never answers: every reply comes from the log.
    """
    record = find_run(store, run_id)
    if record.kind != "agent":
        raise UsageError(f"run {run_id} is a task run: only agent runs can be replayed")
    if record.status not in FINISHED:
        raise UsageError(f"run {run_id} has not finished ({record.status}): resume it first")
    events = store.events(run_id)
    spec = recorded_spec(events)
    if spec is None:
        raise UsageError(f"run {run_id} has no recorded RunSpec: replay it from code")
    started = events[0]
    options: dict[str, Any] = started.options if isinstance(started, RunStartedEvent) else {}
    stand_in = stand_in_model(record.model, AgentOptions.from_dict(options).tool_mode or "prompted")
    agent = (build or _default_factory)(spec, stand_in)

    async def past_the_end(event: Event) -> None:
        raise ReplayDivergence(event.seq, "the end of the run", _what(event))

    context = agent.run_context(
        run_id,
        tenant=record.tenant,
        parent_run_id=record.parent_run_id,
        sink=past_the_end,
        recorded=events,
    )
    lineage = await replayed_lineage(store, run_id, agent, spec)
    setup = agent.setup(spec.request, context, spec=spec.to_dict(), lineage=lineage, goes_on=False)
    fx = agent.effects(context)
    if isinstance(fx, ReplayEffects):
        limit = AgentOptions.from_dict(options).timeout_s or 0.0
        fx = ReplayEffects(fx.recording, _RecordingOnly(fx.inner, _clock_stop(events), limit))
    try:
        await agent.run_with(fx, setup)
    except ReplayDivergence as exc:
        return ReplayReport(run_id, exc.seq - 1, exc, _iteration_at(events, exc.seq))
    return ReplayReport(run_id, len(events))


def _default_factory(spec: RunSpec, model: Model) -> AgentExecutor:
    return build_agent(spec, model)


def _clock_stop(events: Sequence[Event]) -> RunStoppedEvent | None:
    """The run's stop, if its wall clock made it."""
    for event in reversed(events):
        if isinstance(event, RunStoppedEvent):
            return event if event.reason in CLOCK_STOPS else None
    return None


class _RecordingOnly(WrappedEffects):
    """Under a replay's ReplayEffects: what the recording does not answer is not performed.
    In a run its wall clock stopped (`clock_stop`), the clock reads past the run's limit
    once the events before the stop are re-made, and a call there times out; otherwise
    such a call is a divergence (no tool runs, no model is asked, no gate waits)."""

    def __init__(self, live: Effects, clock_stop: RunStoppedEvent | None, limit_s: float) -> None:
        super().__init__(live)
        self.clock_stop = clock_stop
        self.past_limit_s = limit_s + 1.0

    def monotonic(self) -> float:
        now = self.inner.monotonic()
        stop = self.clock_stop
        if stop is not None and self.inner.log.seq >= stop.seq - 1:
            return now + self.past_limit_s  # where the run's clock was when it stopped
        return now

    def _not_recorded(self, what: str) -> ReplayDivergence | TimeoutError:
        if self.clock_stop is not None:
            return TimeoutError(f"{what}: cut off by the run's wall clock, as recorded")
        return ReplayDivergence(self.inner.log.seq + 1, "the end of the run", what)

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        raise self._not_recorded("a model call")

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        raise self._not_recorded(f"call {call.name}")

    async def gate(self, request: GateRequest) -> GateVerdict:
        raise self._not_recorded(f"gate {request.step}")
