"""InMemoryRunStore: the RunStore protocol without persistence (tests, embedding)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence

from loopwright.clock import Clock, SystemClock
from loopwright.errors import StoreError
from loopwright.events import (
    Event,
    ModelResponseEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TaskCompleteEvent,
    TaskStartEvent,
)
from loopwright.store._base import (
    GateDecision,
    Lease,
    RunLookup,
    RunRecord,
    RunStore,
    StoredStatus,
)

POLL_S = 0.01


def reply_tokens(event: ModelResponseEvent) -> tuple[int, int]:
    """The tokens in and out a reply adds to its run's row (a live run's tokens so far)."""
    usage = event.response.get("usage") or {}
    return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))


def record_after(record: RunRecord | None, event: Event) -> RunRecord:
    """The run's row after `event` is appended (shared by every store implementation)."""
    if isinstance(event, RunStartedEvent):
        return RunRecord(
            run_id=event.run_id,
            tenant=event.tenant,
            kind=event.kind,
            status="running",
            request=event.request,
            model=event.model,
            created_at=event.ts,
            updated_at=event.ts,
            last_seq=event.seq,
            parent_run_id=event.parent_run_id,
            options=dict(event.options),
            tools=tuple(event.tools),
            after_run_id=event.after_run_id,
        )
    if record is None:
        raise StoreError(f"event {event.type} for unknown run {event.run_id}: no run_started")
    if event.seq != record.last_seq + 1:
        raise StoreError(
            f"run {event.run_id}: event seq {event.seq} does not follow {record.last_seq}"
        )
    changes: dict[str, object] = {"last_seq": event.seq, "updated_at": event.ts}
    if isinstance(event, RunFinishedEvent):
        changes.update(
            status=event.status,
            answer=event.answer,
            reason=event.reason,
            input_tokens=event.usage.get("input_tokens", 0),
            output_tokens=event.usage.get("output_tokens", 0),
            cost=event.cost,
        )
    elif isinstance(event, ModelResponseEvent):  # a live run's tokens so far
        added_in, added_out = reply_tokens(event)
        changes.update(
            input_tokens=record.input_tokens + added_in,
            output_tokens=record.output_tokens + added_out,
        )
    elif isinstance(event, TaskStartEvent) and not record.request:
        changes["request"] = event.task_name
    elif isinstance(event, TaskCompleteEvent):
        changes["answer"] = event.summary
    return dataclasses.replace(record, **changes)  # type: ignore[arg-type]


class InMemoryRunStore(RunLookup):
    """A RunStore in memory, for tests and runs nobody needs to keep (the default of a
    Runtime given no store)."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        self.clock = clock or SystemClock()
        self._events: dict[str, list[Event]] = {}
        self._runs: dict[str, RunRecord] = {}
        self._leases: dict[str, tuple[str, float]] = {}
        self._gate_decisions: dict[tuple[str, str], GateDecision] = {}

    def register_run(self, record: RunRecord) -> None:
        if record.run_id in self._runs:
            raise StoreError(f"run {record.run_id} is already in this store")
        self._runs[record.run_id] = dataclasses.replace(record, status="queued", last_seq=0)

    def append(self, event: Event) -> None:
        before = self._runs.get(event.run_id)
        record = record_after(before, event)
        if isinstance(event, RunStartedEvent) and before is not None:
            if before.status != "queued":
                raise StoreError(f"run {event.run_id} is already in this store: it started before")
            record = dataclasses.replace(
                record, engine=before.engine, created_at=before.created_at, tenant=before.tenant
            )
        self._runs[event.run_id] = record
        self._events.setdefault(event.run_id, []).append(event)

    def append_many(self, events: Sequence[Event], lines: Sequence[str] | None = None) -> None:
        for event in events:
            self.append(event)

    def events(self, run_id: str, *, after: int = 0) -> list[Event]:
        return [e for e in self._events.get(run_id, []) if e.seq > after]

    def get_run(self, run_id: str, *, tenant: str | None = None) -> RunRecord | None:
        record = self._runs.get(run_id)
        if record is None or (tenant is not None and record.tenant != tenant):
            return None
        return record

    def list_runs(
        self, *, tenant: str | None = None, status: str | None = None, limit: int = 100
    ) -> list[RunRecord]:
        rows = [
            r
            for r in self._runs.values()
            if (tenant is None or r.tenant == tenant) and (status is None or r.status == status)
        ]
        rows.sort(key=lambda r: r.created_at, reverse=True)
        return rows[:limit]

    def follow_ups(self, run_id: str, *, tenant: str | None = None) -> list[RunRecord]:
        rows = [
            r
            for r in self._runs.values()
            if r.after_run_id == run_id and (tenant is None or r.tenant == tenant)
        ]
        return sorted(rows, key=lambda r: (r.created_at, r.run_id))

    def run_ids_starting(
        self, prefix: str, *, tenant: str | None = None, limit: int = 10
    ) -> list[str]:
        ids = sorted(
            run_id
            for run_id, record in self._runs.items()
            if run_id.startswith(prefix) and (tenant is None or record.tenant == tenant)
        )
        return ids[:limit]

    def set_status(self, run_id: str, status: StoredStatus) -> None:
        record = self._runs[run_id]
        self._runs[run_id] = dataclasses.replace(record, status=status)

    def acquire_lease(self, run_id: str, owner: str, ttl_s: float) -> bool:
        now = self.clock.time()
        holder = self._leases.get(run_id)
        if holder is not None and holder[0] != owner and holder[1] > now:
            return False
        self._leases[run_id] = (owner, now + ttl_s)
        return True

    def release_lease(self, run_id: str, owner: str) -> None:
        if self._leases.get(run_id, ("", 0.0))[0] == owner:
            del self._leases[run_id]

    def lease(self, run_id: str) -> Lease | None:
        holder = self._leases.get(run_id)
        return None if holder is None else Lease(*holder)

    async def wait_for_events(self, run_id: str, *, after: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self._stored_after(run_id, after):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            await asyncio.sleep(min(POLL_S, left))  # appends from other threads set no event
        return True

    def _stored_after(self, run_id: str, after: int) -> bool:
        events = self._events.get(run_id)
        return bool(events) and events[-1].seq > after  # type: ignore[index]

    def post_gate_decision(
        self,
        run_id: str,
        request_id: str,
        approved: bool,
        decided_by: str,
        *,
        decided_at: float | None = None,
    ) -> bool:
        key = (run_id, request_id)
        if key in self._gate_decisions:
            return False
        when = self.clock.time() if decided_at is None else decided_at
        decision = GateDecision(run_id, request_id, approved, decided_by, when)
        self._gate_decisions[key] = decision
        return True

    def gate_decision(self, run_id: str, request_id: str) -> GateDecision | None:
        return self._gate_decisions.get((run_id, request_id))

    def close(self) -> None:
        return None


def memory_store(*, clock: Clock | None = None) -> RunStore:
    """A store that keeps runs in this process only: the Runtime's default, and
    `serve --store :memory:`. (Its class, for tests, is loopwright.testing's
    InMemoryRunStore.)"""
    return InMemoryRunStore(clock=clock)
