"""Copy runs from one store to another (`loopwright store copy SRC DST`), verified.

Each run is copied in one transaction (all its events, so its row is rebuilt the same way),
then its status if it was set apart from the events (`rolled_back`), then the decisions on its
gates with their original time; then it is read back from the destination and compared with
the source: every event byte for byte, the run's row, each gate decision. A run already in the
destination with the same events is skipped (a copy can be run again); one with different
events is an error naming it. A run still executing (its lease is live) or queued is left out:
copy it again once it ends. A run of another engine than the embedded one has its row made
first (`register_run`), so its engine is copied too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loopwright.errors import StoreError
from loopwright.events import ConfirmationRequiredEvent, Event, encode_event
from loopwright.store._base import GateDecision, RunRecord
from loopwright.store._open import PersistentStore

EVERY_RUN = 2**31 - 1


@dataclass
class CopyReport:
    copied: list[str] = field(default_factory=list)
    events: int = 0
    already_there: list[str] = field(default_factory=list)
    running: list[str] = field(default_factory=list)


def copy_runs(
    source: PersistentStore, target: PersistentStore, *, tenant: str | None = None
) -> CopyReport:
    """Copy every run (of `tenant`, if given), oldest first; StoreError at the first run
    that cannot be copied or does not read back the same (the runs before it stay copied)."""
    report = CopyReport()
    for record in reversed(source.list_runs(tenant=tenant, limit=EVERY_RUN)):
        run_id = record.run_id
        if record.status in ("running", "queued"):
            report.running.append(run_id)
            continue
        events = source.events(run_id)
        if target.get_run(run_id) is not None:
            if _encoded(target.events(run_id)) != _encoded(events):
                raise StoreError(
                    f"run {run_id} is already in {target.path} with other events: not copied "
                    f"(copy into another store, or leave that run out with --tenant)"
                )
            report.already_there.append(run_id)
            continue
        decisions = _decisions(source, events)
        if record.engine != "embedded":  # its row first: the engine is not in its events
            target.register_run(record)
        target.append_many(events)
        if target.get_run(run_id) != record and record.status not in ("running", "interrupted"):
            target.set_status(run_id, record.status)
        for decision in decisions:
            target.post_gate_decision(
                run_id, decision.request_id, decision.approved, decision.decided_by,
                decided_at=decision.decided_at,
            )  # fmt: skip
        _verify(target, record, events, decisions)
        report.copied.append(run_id)
        report.events += len(events)
    return report


def _encoded(events: list[Event]) -> list[str]:
    return [encode_event(e) for e in events]


def _decisions(store: PersistentStore, events: list[Event]) -> list[GateDecision]:
    found = []
    for event in events:
        if isinstance(event, ConfirmationRequiredEvent):
            decision = store.gate_decision(event.run_id, event.request_id)
            if decision is not None:
                found.append(decision)
    return found


def _row(record: RunRecord) -> dict[str, Any]:
    """The row as both stores must hold it (a run that is not running has no lease here)."""
    data = record.to_dict()
    if data["status"] == "interrupted":
        data["status"] = "running"
    return data


def _verify(
    target: PersistentStore,
    record: RunRecord,
    events: list[Event],
    decisions: list[GateDecision],
) -> None:
    run_id = record.run_id
    copied = target.get_run(run_id)
    problem = None
    if copied is None or _row(copied) != _row(record):
        problem = "its row differs"
    elif _encoded(target.events(run_id)) != _encoded(events):
        problem = "its events differ"
    elif [target.gate_decision(run_id, d.request_id) for d in decisions] != decisions:
        problem = "its gate decisions differ"
    if problem:
        raise StoreError(f"run {run_id} was copied to {target.path} but {problem} when read back")
