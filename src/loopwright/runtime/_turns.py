"""Follow-ups and forks of stored runs: the lineage a new run takes from the run store.

A follow-up's history is its conversation's turns, each made again from its own log in
turn (agent/_history.py), oldest first: what the last turn's model saw, message for
message. A fork's first steps are served from its run's log (agent/_lineage.py); a fork of
a follow-up follows the same turn. Both refuse, with one line and before anything starts,
a run of another tenant (not found), a task run, or one that has not ended.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

from loopwright.agent import AgentExecutor, AgentOptions, ExecutionResult, ForkPoint
from loopwright.agent._history import replayed_transcript
from loopwright.agent._lineage import Lineage, fork_recording
from loopwright.agent._options import recorded_workspace_section
from loopwright.errors import FollowUpError, ForkError, UsageError
from loopwright.events import Event, RunStartedEvent
from loopwright.models._scripted import stand_in_model
from loopwright.runtime._spec import RunSpec, build_agent, recorded_spec
from loopwright.store import RunRecord, RunStore
from loopwright.store._base import find_run

FOLLOWABLE = ("completed", "stopped", "failed", "cancelled")
"""The statuses of an agent run that has ended: a follow-up can go on from it."""


def run_id_of(run: str | ExecutionResult) -> str:
    """`after=` and `fork_of=` take a run id or a result (its run id)."""
    if isinstance(run, ExecutionResult):
        return run.run_id
    if isinstance(run, str) and run:
        return run
    raise UsageError(f"expected a run id or an ExecutionResult, not {run!r}")


def check_followable(record: RunRecord) -> None:
    """A FollowUpError unless `record` is an agent run that has ended."""
    run_id = record.run_id
    if record.kind != "agent":
        raise FollowUpError(f"run {run_id} is a task run: only an agent run can be followed up")
    if record.status in ("queued", "running"):
        raise FollowUpError(
            f"run {run_id} is still {record.status}: follow it up once it has ended "
            f"(`loopwright runs follow {run_id}` waits for its end)"
        )
    if record.status == "interrupted":
        raise FollowUpError(
            f"run {run_id} was interrupted: resume it first (`loopwright runs resume "
            f"{run_id}`), then follow it up"
        )
    if record.status not in FOLLOWABLE:  # waiting for a decision, say: it has not ended
        raise FollowUpError(
            f"run {run_id} is {record.status}: follow it up once it has ended "
            f"(`loopwright runs resume {run_id}` goes on with it)"
        )


def check_forkable(store: RunStore, fork: ForkPoint, *, tenant: str | None) -> None:
    """A ForkError (or RunNotFound) unless `fork` names a step of a stored agent run of
    `tenant` that is not running."""
    record = find_run(store, fork.run_id, tenant=tenant)
    if record.kind != "agent":
        raise ForkError(f"run {fork.run_id} is a task run: only an agent run can be forked")
    if record.status in ("queued", "running"):
        raise ForkError(f"run {fork.run_id} is still {record.status}: fork it once it has ended")
    fork_recording(store.events(fork.run_id), fork.step, "")  # the step is one of the run's


def _chain(store: RunStore, run_id: str) -> list[list[Event]]:
    """The logs of the conversation's turns up to `run_id`, oldest first."""
    chain: list[list[Event]] = []
    seen: set[str] = set()
    current: str | None = run_id
    while current is not None:
        if current in seen:
            raise FollowUpError(f"run {run_id}'s conversation loops back to run {current}")
        seen.add(current)
        events = store.events(current)
        started = events[0] if events else None
        if not isinstance(started, RunStartedEvent):
            raise FollowUpError(f"run {current} has no stored start to follow up")
        chain.append(events)
        current = started.after_run_id
    chain.reverse()
    return chain


def _same_agent(one: RunSpec, other: RunSpec) -> bool:
    """Do the two specs make the same agent (whatever their requests and links)?"""

    def blank(spec: RunSpec) -> RunSpec:
        return dataclasses.replace(spec, request="", after=None, fork_of=None, tenant="")

    return blank(one) == blank(other)


def _replaying_agent(
    events: Sequence[Event], agent: AgentExecutor, spec: RunSpec | None
) -> AgentExecutor:
    """Who makes a turn again: the new turn's agent, unless the turn was started from a
    spec that makes another one (then that spec's, with a model that is never called)."""
    turn = recorded_spec(events)
    if turn is None or spec is None or _same_agent(turn, spec):
        return agent
    if turn.mcp or (turn.skill and turn.allow_skill_commands):
        return agent  # its tools or prompt need servers or commands: the live agent's
    started = events[0]
    assert isinstance(started, RunStartedEvent)
    tool_mode = AgentOptions.from_dict(started.options).tool_mode or "prompted"
    return build_agent(turn, stand_in_model(started.model, tool_mode), scrubber=agent.scrubber)


async def follow_up_lineage(
    store: RunStore,
    run_id: str,
    agent: AgentExecutor,
    *,
    tenant: str | None,
    spec: RunSpec | None = None,
) -> Lineage:
    """The lineage of a turn after the stored run `run_id` (of `tenant`), made by `agent`
    (built from `spec`, when it was)."""
    record = await asyncio.to_thread(find_run, store, run_id, tenant=tenant)
    check_followable(record)
    chain = await asyncio.to_thread(_chain, store, run_id)
    transcript = None
    for events in chain:
        turn_agent = _replaying_agent(events, agent, spec)
        transcript = await replayed_transcript(turn_agent, events, transcript)
    return Lineage(run_id, transcript, recorded_workspace_section(chain[-1]))


async def fork_lineage(
    store: RunStore,
    fork: ForkPoint,
    new_run_id: str,
    agent: AgentExecutor,
    *,
    tenant: str | None,
    spec: RunSpec | None = None,
) -> Lineage:
    """The lineage of the fork `new_run_id` of the stored run `fork.run_id` (of `tenant`)
    at `fork.step`: the old run's first steps to serve, and its turn before, if any."""
    await asyncio.to_thread(check_forkable, store, fork, tenant=tenant)
    events = await asyncio.to_thread(store.events, fork.run_id)
    served = fork_recording(events, fork.step, new_run_id)
    started = events[0]
    assert isinstance(started, RunStartedEvent)
    history = None
    if started.after_run_id is not None:
        before = await follow_up_lineage(
            store, started.after_run_id, agent, tenant=tenant, spec=spec
        )
        history = before.history
    section = recorded_workspace_section(events)
    return Lineage(started.after_run_id, history, section, fork, served)


async def stored_lineage(
    store: RunStore,
    run_id: str,
    agent: AgentExecutor,
    *,
    tenant: str,
    after: str | None,
    fork_of: ForkPoint | None,
    spec: RunSpec | None = None,
) -> Lineage:
    """The lineage of run `run_id` of `agent` (built from `spec`, when it was): a fork's
    (`fork_of`), a follow-up's (`after`), or none."""
    if fork_of is not None:
        return await fork_lineage(store, fork_of, run_id, agent, tenant=tenant, spec=spec)
    if after is not None:
        return await follow_up_lineage(store, after, agent, tenant=tenant, spec=spec)
    return Lineage()


def fork_point(fork_of: tuple[str | ExecutionResult, int]) -> ForkPoint:
    """`fork_of=(run, step)` as a ForkPoint (a run id or a result)."""
    if not isinstance(fork_of, tuple) or len(fork_of) != 2:
        raise ForkError(f"fork_of= takes (run id or result, step), not {fork_of!r}")
    run, step = fork_of
    return ForkPoint(run_id_of(run), step)


def check_links(
    store: RunStore, *, tenant: str, after: str | None, fork_of: ForkPoint | None
) -> None:
    """Before a run starts: the run it follows up (`after`) or forks can be, and is of
    `tenant` (another tenant's is not found). A fork follows the turn its run followed."""
    if fork_of is not None:
        check_forkable(store, fork_of, tenant=tenant)
    elif after is not None:
        check_followable(find_run(store, after, tenant=tenant))


def fork_spec(
    store: RunStore,
    record: RunRecord,
    fork: ForkPoint,
    request: str | None,
    model: str | None,
    base_url: str | None,
) -> RunSpec:
    """The spec of a fork of the stored run `record` at `fork.step`: its own, with the
    request and model given (the model's server: `base_url`)."""
    events = store.events(record.run_id)
    spec = recorded_spec(events)
    if spec is None:
        raise ForkError(
            f"run {record.run_id} was started from code, not from a RunSpec: fork it from "
            f"code with runtime.start_agent(agent, request, fork_of=({record.run_id!r}, "
            f"{fork.step}))"
        )
    started = events[0]
    assert isinstance(started, RunStartedEvent)
    changes: dict[str, object] = {"fork_of": fork, "after": started.after_run_id}
    if request is not None:
        changes["request"] = request
    if model is not None:
        changes.update(model=model, base_url=base_url)
    return dataclasses.replace(spec, tenant=record.tenant, **changes)  # type: ignore[arg-type]


def linked_workspace_section(store: RunStore, spec: RunSpec) -> str | None:
    """The workspace section of the run a follow-up or a fork is made from (its prompt
    stays the same), or None for any other run."""
    source = spec.fork_of.run_id if spec.fork_of is not None else spec.after
    if source is None:
        return None
    return recorded_workspace_section(store.events(source))


async def replayed_lineage(
    store: RunStore, run_id: str, agent: AgentExecutor, spec: RunSpec
) -> Lineage:
    """The lineage a stored run of `spec` is made again with (replayed, or a request of it
    rebuilt): the history it followed; a fork's first steps are in its own log."""
    lineage = await stored_lineage(
        store, run_id, agent, tenant=spec.tenant, after=spec.after, fork_of=spec.fork_of,
        spec=spec,
    )  # fmt: skip
    return dataclasses.replace(lineage, served=None)
