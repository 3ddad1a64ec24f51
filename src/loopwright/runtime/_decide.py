"""Deciding a gate a run waits at, whoever executes the run: this process (its gatekeeper
takes the decision at once), another process or a lead's later turn (through the store),
or the run's engine (its workers)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from loopwright.errors import UsageError
from loopwright.runtime._embedded import EmbeddedEngine
from loopwright.runtime._engine import Delivery, RunEngine
from loopwright.runtime._gates import GateDecided, lead_of, waiting_gate
from loopwright.store import RunRecord
from loopwright.tasks import GateBroker
from loopwright.tasks._gates import join_decider


async def decide_gate(
    embedded: EmbeddedEngine,
    engine_of: Callable[[RunRecord], RunEngine],
    record: RunRecord,
    gate_id: str | None,
    approved: bool,
    decided_by: str,
    reason: str,
) -> GateDecided:
    """`Runtime.approve` once the run is found: the gate it waits at (`gate_id` None: the
    one), decided where the decision can be taken."""
    events = await asyncio.to_thread(embedded.store.events, record.run_id)
    gates = embedded.gates
    here = gates.pending(record.run_id) if isinstance(gates, GateBroker) else ()
    waiting = [gate.request_id for gate in here]
    gate_id = waiting_gate(record, events, gate_id, waiting_here=waiting)
    if gates.resolve(gate_id, approved, decided_by, reason):
        return GateDecided(record.run_id, gate_id, approved, "process")
    lead = await asyncio.to_thread(lead_of, embedded.store, events)
    if lead is not None:
        decided = join_decider(decided_by, reason)
        delivered = await _for_subagent(
            embedded, engine_of, record, lead, gate_id, approved, decided
        )
    else:
        engine = engine_of(record)
        delivered = await engine.approve(record, gate_id, approved, decided_by, reason)
    return GateDecided(record.run_id, gate_id, approved, delivered)


async def _for_subagent(
    embedded: EmbeddedEngine,
    engine_of: Callable[[RunRecord], RunEngine],
    record: RunRecord,
    lead: RunRecord,
    gate_id: str,
    approved: bool,
    decided: str,
) -> Delivery:
    """A sub-agent's run executes inside its lead's tool call, wherever the lead does,
    and takes its gates' decisions from the store (its GateBroker polls): left there
    while a process executes it, or while its lead goes on later (a workflow waiting for
    a worker, which tries the call again and resumes the sub-agent's run), or for the
    resume of a lead that ended `waiting`. `decided`: who decided and why, as stored."""
    executing = await embedded.liveness(record.run_id)()  # a live process holds it
    executing = executing or lead.status == "waiting"  # its resume takes the decision
    if not executing and not await engine_of(lead).liveness(lead.run_id)():
        raise UsageError(
            f"run {record.run_id} is a sub-agent's run of run {lead.run_id}, which is "
            f"{lead.status}: resume that run (`loopwright runs resume {lead.run_id}`), "
            "then decide"
        )
    posted = embedded.store.post_gate_decision
    if not await asyncio.to_thread(posted, record.run_id, gate_id, approved, decided):
        raise UsageError(f"gate {gate_id} already has a decision, not yet taken by its run")
    return "store" if executing else "queued"
