"""What every persistent store writes and reads the same way: an event's stored text, a
run's row as values, a RunRecord from a selected row (with the lease's verdict), and the
check that an appended event follows its run's stored ones."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from loopwright.errors import StoreError
from loopwright.events import (
    Event,
    ModelResponseEvent,
    RunFinishedEvent,
    TaskCompleteEvent,
    TaskStartEvent,
    encode_event,
)
from loopwright.store._base import RunRecord
from loopwright.store._owners import owner_is_gone
from loopwright.store._text import row_text, storable_line, storable_text

ROW_EVENTS = (RunFinishedEvent, TaskStartEvent, TaskCompleteEvent, ModelResponseEvent)
"""Events that change a run's row (besides run_started, which creates it); a model's reply
adds its tokens, so a live run's row shows the tokens so far."""
encode = encode_event
"""An event's stored form: one line of JSON."""


def run_row(record: RunRecord) -> tuple[Any, ...]:
    """The values of a `runs` row, in the column order of both stores' INSERT (free text
    that neither store could hold as it is, escaped: store/_text.py)."""
    return (
        record.run_id,
        record.tenant,
        record.kind,
        record.status,
        storable_text(record.request),
        record.model,
        record.created_at,
        record.input_tokens,
        record.output_tokens,
        record.cost,
        storable_text(record.answer),
        storable_text(record.reason),
        record.parent_run_id,
        storable_line(json.dumps(record.options, ensure_ascii=False, default=str)),
        storable_line(json.dumps(list(record.tools), ensure_ascii=False)),
        record.engine,
        record.after_run_id,
    )


def row_update(record: RunRecord) -> tuple[Any, ...]:
    """The values of both stores' UPDATE of a run's row after an event that changes it."""
    return (
        record.status,
        storable_text(record.request),
        record.input_tokens,
        record.output_tokens,
        record.cost,
        storable_text(record.answer),
        storable_text(record.reason),
        record.run_id,
    )


def record_of(row: Sequence[Any], *, now: float | None) -> RunRecord:
    """A selected run row: run_id, tenant, kind, status, request, model, created_at,
    last_seq, updated_at, input_tokens, output_tokens, cost, answer, reason, parent_run_id,
    options, tools, engine, the lease's expires_at and owner, after_run_id (last_seq and
    updated_at are NULL for a queued run: it has no event yet).

    With `now`, a running run is `interrupted` if its lease has lapsed or its owner is a
    process on this host that has exited."""
    status = row[3]
    if now is not None and status == "running":
        expires_at, owner = row[18], row[19]
        if expires_at is None or expires_at <= now or owner_is_gone(owner):
            status = "interrupted"
    return RunRecord(
        run_id=row[0],
        tenant=row[1],
        kind=row[2],
        status=status,
        request=row_text(row[4]) or "",
        model=row[5],
        created_at=row[6],
        last_seq=row[7] or 0,
        updated_at=row[6] if row[8] is None else row[8],
        input_tokens=row[9],
        output_tokens=row[10],
        cost=row[11],
        answer=row_text(row[12]),
        reason=row_text(row[13]),
        parent_run_id=row[14],
        options=json.loads(row[15]),
        tools=tuple(json.loads(row[16])),
        engine=row[17],
        after_run_id=row[20],
    )


def check_follows(event: Event, last: int | None) -> None:
    """A StoreError unless `event` is the next of its run, whose newest stored seq is
    `last` (None: the run has no event, so no run_started)."""
    if last is None:
        raise StoreError(f"event {event.type} for unknown run {event.run_id}: no run_started")
    if event.seq != last + 1:
        raise StoreError(f"run {event.run_id}: event seq {event.seq} does not follow {last}")
