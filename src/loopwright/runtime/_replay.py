"""Replay a finished agent run against the current code (`loopwright runs replay`).

The recorded model replies are served to the current code, no tool runs (their recorded
results are reused), the recorded verification outcome is reused; the first event where
the code now does something else is reported (`ReplayReport`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.errors import ReplayDivergence, RunNotFound, UsageError
from loopwright.events import Event, IterationStartedEvent, RunStartedEvent, ToolCallStartedEvent
from loopwright.models import Model, stand_in_model
from loopwright.runtime._spec import RunSpec, build_agent, recorded_spec
from loopwright.store import RunRecord, RunStore

AgentFactory = Callable[[RunSpec, Model], AgentExecutor]
FINISHED = ("completed", "stopped", "failed", "cancelled", "rolled_back")


def find_run(store: RunStore, run_id: str, *, tenant: str | None = None) -> RunRecord:
    record = store.get_run(run_id, tenant=tenant)
    if record is None:
        raise RunNotFound(run_id, str(getattr(store, "path", "")))
    return record


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
    setup = agent.setup(spec.request, context, spec=spec.to_dict())
    fx = agent.effects(context)
    try:
        await agent.run_with(fx, setup)
    except ReplayDivergence as exc:
        return ReplayReport(run_id, exc.seq - 1, exc, _iteration_at(events, exc.seq))
    return ReplayReport(run_id, len(events))


def _default_factory(spec: RunSpec, model: Model) -> AgentExecutor:
    return build_agent(spec, model)
