"""Resume and replay stored agent runs, from nothing but the store and a run id.

`run_started` records the run's RunSpec (model spec, tools, options; never keys), so
`resume_agent_run` rebuilds the same agent and hands the loop the recorded events: done
model and tool calls are reused, and the run continues from where its process stopped.
`replay_run` feeds the recorded model replies to the current code without running any
tool and reports the first event where the code now does something else.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from loopwright.agent import (
    AgentExecutor,
    CallableVerifier,
    CommandVerifier,
    ExecutionResult,
    VerificationResult,
)
from loopwright.errors import ReplayDivergence, RunNotFound, UsageError
from loopwright.events import (
    Event,
    IterationStarted,
    ModelResponded,
    RunStarted,
    ToolCallStarted,
    VerificationFinished,
)
from loopwright.models import Model, ScriptedModel, resolve_model
from loopwright.runtime._runtime import EventSink, Runtime
from loopwright.runtime._spec import RunSpec, build_agent
from loopwright.store import RunRecord, RunStore
from loopwright.tools import Tool

AgentFactory = Callable[[RunSpec, Model], AgentExecutor]
FINISHED = ("completed", "stopped", "failed", "cancelled", "rolled_back")


def find_run(store: RunStore, run_id: str, *, tenant: str | None = None) -> RunRecord:
    record = store.get_run(run_id, tenant=tenant)
    if record is None:
        raise RunNotFound(run_id, str(getattr(store, "path", "")))
    return record


def recorded_spec(events: Sequence[Event]) -> RunSpec:
    """The RunSpec a run was started from (recorded in its run_started options)."""
    first = events[0] if events else None
    spec = first.options.get("extra", {}).get("spec") if isinstance(first, RunStarted) else None
    if not isinstance(spec, dict):
        run_id = first.run_id if first is not None else "?"
        raise UsageError(
            f"run {run_id} has no recorded RunSpec (it was not started from one): resume it "
            "from code with AgentExecutor.run(request, recorded=store.events(run_id))"
        )
    return RunSpec.from_dict(spec)


def _agent_run_to_continue(store: RunStore, run_id: str) -> RunRecord:
    record = find_run(store, run_id)
    if record.kind != "agent":
        raise UsageError(
            f"run {run_id} is a task run: task runs are not resumed; roll it back with "
            f"`loopwright task rollback {run_id}` and run the task again"
        )
    if record.status in FINISHED:
        raise UsageError(
            f"run {run_id} already ended ({record.status}); nothing to resume "
            f"(to carry on from a stopped run: loopwright run --continue {run_id})"
        )
    return record


@contextlib.asynccontextmanager
async def _tools_for(spec: RunSpec) -> AsyncIterator[list[Tool]]:
    """The MCP servers' tools the spec names, connected for the run's lifetime."""
    servers = list(spec.extra.get("mcp") or ())
    if not servers:
        yield []
        return
    from loopwright.mcp import MCPConnections

    async with MCPConnections(servers) as connections:
        yield list(connections.tools())


async def resume_agent_run(
    runtime: Runtime,
    run_id: str,
    *,
    model: Model | None = None,
    on_event: EventSink | None = None,
    prepare: Callable[[AgentExecutor], AgentExecutor] | None = None,
) -> ExecutionResult:
    """Continue an interrupted agent run in this process, under its lease.

    ResumeConflict if another live process holds the run. A ScriptedModel skips the
    replies the log already holds, so it resumes at the reply where the run left off.
    `prepare` may adjust the rebuilt agent (e.g. add secrets to scrub: they are never
    recorded). New events go to the runtime (store first), then to `on_event`.
    """
    _agent_run_to_continue(runtime.store, run_id)
    runtime.leases.hold(run_id)
    try:
        record = _agent_run_to_continue(runtime.store, run_id)  # it may have ended meanwhile
        events = runtime.store.events(run_id)
        spec = recorded_spec(events)
        if model is None:
            model = resolve_model(spec.model, base_url=spec.base_url)
            if isinstance(model, ScriptedModel):
                model.skip(sum(isinstance(e, ModelResponded) for e in events))

        async def sink(event: Event) -> None:
            await runtime.publish(event)
            if on_event is not None:
                await on_event(event)

        async with _tools_for(spec) as extra_tools:
            agent = build_agent(spec, model=model, extra_tools=extra_tools)
            if spec.extra.get("verify"):
                agent.verifier = CommandVerifier(str(spec.extra["verify"]))
            if prepare is not None:
                agent = prepare(agent)
            return await agent.run(
                spec.request,
                run_id=run_id,
                tenant=record.tenant,
                parent_run_id=record.parent_run_id,
                on_event=sink,
                recorded=events,
            )
    finally:
        runtime.leases.release(run_id)


# --- replay --------------------------------------------------------------------------------


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


def _recorded_verifier(events: Sequence[Event]) -> CallableVerifier | None:
    for event in events:
        if isinstance(event, VerificationFinished):
            result = VerificationResult(
                event.outcome, tuple(event.passed), tuple(event.failed), event.output
            )
            return CallableVerifier(_constant(result))
    return None


def _constant(result: VerificationResult) -> Callable[[Any], VerificationResult]:
    return lambda _workspace: result


def _iteration_at(events: Sequence[Event], seq: int) -> int | None:
    iteration = None
    for event in events[: max(0, min(seq, len(events)))]:
        if isinstance(event, IterationStarted):
            iteration = event.iteration
    return iteration


def _default_factory(spec: RunSpec, model: Model) -> AgentExecutor:
    return build_agent(spec, model=model)


async def replay_run(
    store: RunStore, run_id: str, *, build: AgentFactory | None = None
) -> ReplayReport:
    """Re-run a finished agent run against its recorded effects; report any divergence.

    The model is never called (its recorded replies are served) and no tool runs (their
    recorded results are reused); the recorded verification outcome is reused too. `build`
    makes the agent from the recorded spec and a stand-in model (default: `build_agent`).
    """
    record = find_run(store, run_id)
    if record.kind != "agent":
        raise UsageError(f"run {run_id} is a task run: only agent runs can be replayed")
    if record.status not in FINISHED:
        raise UsageError(f"run {run_id} has not finished ({record.status}): resume it first")
    events = store.events(run_id)
    spec = recorded_spec(events)
    started = events[0]
    options: dict[str, Any] = started.options if isinstance(started, RunStarted) else {}
    stand_in = ScriptedModel(
        [], name=record.model, tool_mode=options.get("tool_mode") or "prompted", strict=False
    )
    agent = (build or _default_factory)(spec, stand_in)
    agent.verifier = _recorded_verifier(events)

    async def past_the_end(event: Event) -> None:
        raise ReplayDivergence(event.seq, "the end of the run", _what(event))

    try:
        await agent.run(
            spec.request,
            run_id=run_id,
            tenant=record.tenant,
            parent_run_id=record.parent_run_id,
            on_event=past_the_end,
            recorded=events,
        )
    except ReplayDivergence as exc:
        return ReplayReport(run_id, exc.seq - 1, exc, _iteration_at(events, exc.seq))
    return ReplayReport(run_id, len(events))


def _what(event: Event) -> str:
    if isinstance(event, ToolCallStarted):
        return f"call {event.tool_name}"
    return event.type
