"""Deciding a run's gate through the Runtime: which gate a decision is for (it must be one
the run waits at now), and what was done with the decision."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from loopwright.errors import GateNotFound, UsageError
from loopwright.events import Event, RunStartedEvent
from loopwright.runtime._engine import Delivery
from loopwright.store import RunRecord, RunStore
from loopwright.tasks import pending_gates
from loopwright.tasks._gates import gate_was_asked


@dataclass(frozen=True)
class GateDecided:
    """What `Runtime.approve` did with a decision."""

    run_id: str
    gate_id: str
    """The gate decided (the one waiting, when none was named)."""
    approved: bool
    delivered: Delivery
    """Where the decision went: `process` (a gate waiting here took it), `engine` (the
    run's engine took it), `store` (left for the process that executes the run) or
    `queued` (recorded for the run's next worker)."""

    @property
    def taken(self) -> bool:
        """Did the run take it already (not left for a process or a worker to come)?"""
        return self.delivered in ("process", "engine")


def waiting_gate(
    record: RunRecord,
    events: Sequence[Event],
    gate_id: str | None,
    *,
    waiting_here: Iterable[str] = (),
) -> str:
    """The gate a decision is for: `gate_id` if the run waits at it, else the only one it
    waits at. `events` are the run's stored ones; `waiting_here`, the gates of the run
    waiting in this process (one not stored yet counts). GateNotFound for a gate the run
    never asked; a UsageError for one it no longer waits at, or when it waits at none (or
    at several, and none was named)."""
    run_id = record.run_id
    pending: list[str] = [str(gate["request_id"]) for gate in pending_gates(events)]
    pending += [gate for gate in waiting_here if gate not in pending]
    if gate_id is None:
        if not pending:
            raise UsageError(
                f"run {run_id} has no gate waiting for a decision (status {record.status})"
            )
        if len(pending) > 1:
            raise UsageError(
                f"run {run_id} has several gates waiting: name one of {', '.join(pending)}"
            )
        return pending[0]
    if gate_id in pending:
        return gate_id
    now = f"waiting: {', '.join(pending)}" if pending else f"status {record.status}"
    error = UsageError if gate_was_asked(events, gate_id) else GateNotFound
    raise error(f"run {run_id} has no gate {gate_id!r} waiting ({now})")


def lead_of(store: RunStore, events: Sequence[Event]) -> RunRecord | None:
    """The run a sub-agent's run executes in: the run whose tool call started it (and so
    on up, for a sub-agent's sub-agent). None for a run no call started."""
    lead = None
    started = events[0] if events else None
    seen: set[str] = set()
    while isinstance(started, RunStartedEvent) and started.parent_call_id:
        parent = started.parent_run_id
        if parent is None or parent in seen:
            break
        seen.add(parent)
        found = store.get_run(parent)
        if found is None:
            break
        lead = found
        first = store.events(parent)[:1]
        started = first[0] if first else None
    return lead
