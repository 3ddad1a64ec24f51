"""Runs of agents built in code, on the embedded engine: typed deps, and runs that end
`waiting` at a tool call nobody has decided (`on_pending="wait"`).

A run that ends waiting is stored without `run_finished`, its status `waiting` (its gate's
`confirmation_required` is in its log); `Runtime.approve` leaves a decision for it in the
store (for a gate of the run, or of a sub-agent run under it), and `Runtime.resume_agent`
goes on with it, in this process or another: the log replays, and at the gate the run's
gatekeeper finds the decision in the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from loopwright.agent import AgentExecutor, ExecutionResult, ForkPoint, WaitingGates
from loopwright.effects import Gatekeeper
from loopwright.effects._log import EventSink
from loopwright.errors import UsageError
from loopwright.events import Event, RunStartedEvent
from loopwright.run_context import Recorder
from loopwright.runtime._handles import RunHandle
from loopwright.runtime._lease import LeaseKeeper
from loopwright.runtime._resume import check_resumable
from loopwright.store import RunRecord, RunStore


class CodeAgentEngine(Protocol):
    """What resuming a run of an agent built in code needs of the embedded engine."""

    store: RunStore
    leases: LeaseKeeper

    def start_agent(
        self,
        agent: AgentExecutor[Any, Any],
        request: str,
        *,
        run_id: str,
        tenant: str,
        parent_run_id: str | None,
        on_event: EventSink | None,
        deps: Any = None,
        recorded: Sequence[Event] = (),
        after: str | None = None,
        fork_of: ForkPoint | None = None,
    ) -> RunHandle: ...


MAX_NESTING = 16
"""How far up a sub-agent run's leads `waits_for_resume` looks (runs nest 3 deep by default)."""


def gates_of(agent: AgentExecutor[Any, Any], broker: Gatekeeper, store: RunStore) -> Gatekeeper:
    """Who decides the gates of a run of `agent`: the engine's broker (a decision taken while
    the run waits), or for an agent that ends `waiting` instead, the decisions left in the
    store."""
    return WaitingGates(store=store) if agent.on_pending == "wait" else broker


async def ended(store: RunStore, writer: Recorder, result: ExecutionResult) -> None:
    """After a run of an agent built in code: one that ended `waiting` is stored so (once
    its events are), for `Runtime.approve` to leave a decision and `resume_agent` to go on."""
    if result.status == "waiting":
        await writer.flush()
        await asyncio.to_thread(store.set_status, result.run_id, "waiting")


def waits_for_resume(store: RunStore, record: RunRecord) -> bool:
    """The run ended `waiting`, or is a sub-agent's run under one that did (its gate is the
    one its lead waits at): a decision on it is left in the store for the resume."""
    current: RunRecord | None = record
    for _ in range(MAX_NESTING):
        if current is None:
            return False
        if current.status == "waiting":
            return True
        if current.parent_run_id is None:
            return False
        current = store.get_run(current.parent_run_id)
    return False


def _run_started(record: RunRecord, events: Sequence[Event]) -> RunStartedEvent:
    if record.kind != "agent" or not events or not isinstance(events[0], RunStartedEvent):
        raise UsageError(f"run {record.run_id} is not an agent run: resume it with runs resume")
    return events[0]


async def resume_agent(
    engine: CodeAgentEngine,
    agent: AgentExecutor[Any, Any],
    record: RunRecord,
    *,
    deps: Any,
    on_event: EventSink | None,
) -> RunHandle:
    """Go on with a stored run of `agent` (it ended `waiting`, or its process stopped):
    its lease first, then its log, replayed, then live; its deps given again."""
    run_id = record.run_id
    check_resumable(record)
    engine.leases.hold_as_read(run_id, record.last_seq)
    try:
        events = await asyncio.to_thread(engine.store.events, run_id)
        started = _run_started(record, events)
        if record.status == "waiting":  # executing again: followers wait for its events
            await asyncio.to_thread(engine.store.set_status, run_id, "running")
        return engine.start_agent(
            agent, started.request, run_id=run_id, tenant=started.tenant,
            parent_run_id=started.parent_run_id, on_event=on_event, deps=deps,
            recorded=events, after=started.after_run_id,
            fork_of=ForkPoint.from_dict(started.fork_of) if started.fork_of else None,
        )  # fmt: skip
    except BaseException:
        engine.leases.release(run_id)
        raise
