"""A stored run as one JSON document (`loopwright runs export`).

Agent runs: `{"format": "loopwright.run/1", "run": {...}, "events": [...]}`. Task runs
keep seed 004's TaskRunState shape at the top level (task_id, task_name, status,
started_at, steps_completed, current_step, change_log, ...), plus `run` and `events`.
"""

from __future__ import annotations

from typing import Any

from loopwright.events import event_to_dict
from loopwright.store import RunStore
from loopwright.store._base import find_run
from loopwright.tasks import TaskRunState, rebuild_state

RUN_FORMAT = "loopwright.run/1"


def task_state(store: RunStore, run_id: str) -> TaskRunState:
    """A task run's TaskRunState, folded from its stored events (the store is the state)."""
    record = find_run(store, run_id)
    state = rebuild_state(store.events(run_id))
    if record.status in ("rolled_back", "interrupted"):
        state.status = "rolled_back" if record.status == "rolled_back" else "failed"
    return state


def export_run(store: RunStore, run_id: str) -> dict[str, Any]:
    record = find_run(store, run_id)
    events = [event_to_dict(e) for e in store.events(run_id)]
    if record.kind == "task":
        return {**task_state(store, run_id).to_dict(), "run": record.to_dict(), "events": events}
    return {"format": RUN_FORMAT, "run": record.to_dict(), "events": events}
