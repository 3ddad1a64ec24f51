"""Pending gates, read from a run's log (they live with the GateBroker in loopwright.tasks)."""

from __future__ import annotations

from loopwright.events import ConfirmationRequiredEvent
from loopwright.store import RunRecord, RunStore
from loopwright.tasks import pending_gates
from loopwright.tasks._gates import gate_was_asked

__all__ = ["gate_was_asked", "pending_gates", "waits_for_decision"]


def waits_for_decision(store: RunStore, record: RunRecord) -> bool:
    """Whether a running run is held at a gate now, from its last event alone (a listing
    reads no whole logs): a run waits at one gate at a time and appends nothing while it
    waits, so its latest event is that gate's `confirmation_required`."""
    if record.status != "running" or record.last_seq < 1:
        return False
    latest = store.events(record.run_id, after=record.last_seq - 1)
    return bool(latest) and isinstance(latest[-1], ConfirmationRequiredEvent)
