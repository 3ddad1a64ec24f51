"""How a decision reaches a run that executes on Temporal (no temporalio import here).

A Temporal run's activities hold its lease in the run store under one owner name,
`temporal-engine`; a gate waiting in its workflow holds it for as long as the gate may
wait. So whoever decides a gate (`runs approve`, `task approve`, the server) can tell a
Temporal run from the store alone, and sends the decision to its workflow as the Update
`approve` instead of leaving it in the store for an embedded process.
"""

from __future__ import annotations

from loopwright.errors import UsageError
from loopwright.store import RunStore

TEMPORAL_LEASE_OWNER = "temporal-engine"


def on_temporal(store: RunStore, run_id: str) -> bool:
    """True if the run executes (or last executed) on Temporal workers."""
    lease = store.lease(run_id)
    return lease is not None and lease.owner == TEMPORAL_LEASE_OWNER


async def decide_on_temporal(
    address: str | None,
    run_id: str,
    gate_id: str,
    approved: bool,
    by: str,
    reason: str = "",
) -> None:
    """Send the decision to the run's workflow; a UsageError when it is refused (unknown
    gate, already decided, run ended) or when no Temporal address was given."""
    if not address:
        raise UsageError(
            f"run {run_id} executes on Temporal workers: its gates are decided through "
            "Temporal (pass --temporal HOST:PORT)"
        )
    try:
        from loopwright.engines.temporal import send_decision
    except ImportError:
        raise UsageError(
            f"run {run_id} executes on Temporal: deciding its gates needs the temporal extra "
            "(pip install 'loopwright[temporal]')"
        ) from None
    await send_decision(address, run_id, gate_id, approved, by, reason)
