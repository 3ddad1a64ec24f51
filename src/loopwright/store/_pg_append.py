"""How PostgresRunStore writes the events of one `append_many`.

A batch that only continues runs whose last seq the store knows (no run row to make or
change) is one statement, one round trip (`quick_rows`, `write_rows`). Any other batch is
planned first (`plan_batch`: each event checked to follow the one before it, in the batch
or stored; the run rows it makes or changes worked out), then written in the caller's
transaction (`write_batch`). Both end with a NOTIFY per run naming its newest seq (the live
tail, store/_pg_listen.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from loopwright.errors import StoreError
from loopwright.events import Event, RunStartedEvent
from loopwright.store._base import RunRecord
from loopwright.store._memory import record_after
from loopwright.store._pg_listen import CHANNEL, payload
from loopwright.store._pg_sql import (
    INSERT_EVENT,
    INSERT_RUN,
    LAST_SEQ,
    SELECT_RUN,
    UPDATE_RUN,
    append_rows,
)
from loopwright.store._rows import ROW_EVENTS, check_follows, encode, record_of, row_update, run_row

if TYPE_CHECKING:
    import psycopg

QUICK_MAX = 1000
"""Longer batches go through the transaction path (a statement has at most 65,535 values)."""
Rows = list[tuple[Any, ...]]


@dataclasses.dataclass
class Batch:
    """What one append_many writes, worked out before the transaction's statements."""

    started: set[str] = dataclasses.field(default_factory=set)
    records: dict[str, RunRecord] = dataclasses.field(default_factory=dict)
    rows: Rows = dataclasses.field(default_factory=list)
    last: dict[str, int] = dataclasses.field(default_factory=dict)


def quick_rows(
    events: Sequence[Event], lines: Sequence[str] | None, known: Mapping[str, int]
) -> tuple[Rows, dict[str, int]] | None:
    """The rows of a batch that only continues runs whose last seq is `known` (each seq
    following the one before), and the runs' new last seqs; or None. A stale last seq
    cannot make a gap: the seq it names is stored, so the insert fails on the primary key."""
    if len(events) > QUICK_MAX:
        return None
    last: dict[str, int] = {}
    rows = []
    for index, event in enumerate(events):
        if isinstance(event, (RunStartedEvent, *ROW_EVENTS)):
            return None
        before = last.get(event.run_id, known.get(event.run_id))
        if before is None or event.seq != before + 1:
            return None
        last[event.run_id] = event.seq
        line = encode(event) if lines is None else lines[index]
        rows.append((event.run_id, event.seq, event.type, event.ts, line))
    return rows, last


def write_rows(
    conn: psycopg.Connection[tuple[Any, ...]], rows: Rows, last: Mapping[str, int]
) -> None:
    """The rows of `quick_rows` and their runs' NOTIFYs, in one statement."""
    notes = [payload(run_id, seq) for run_id, seq in last.items()]
    params = [value for row in rows for value in row] + notes
    conn.execute(append_rows(len(rows), len(notes)), params)


def plan_batch(
    conn: psycopg.Connection[tuple[Any, ...]],
    events: Sequence[Event],
    lines: Sequence[str] | None,
    known: Callable[[str], int | None],
    where: str,
) -> Batch:
    """Check every event follows the one before it (in the batch, or stored: `known` gives
    the last seq the store appended of a run, read again when the event does not follow it).
    `where` names the store in errors."""
    batch = Batch()
    for index, event in enumerate(events):
        run_id = event.run_id
        if isinstance(event, RunStartedEvent):
            batch.started.add(run_id)
            batch.records[run_id] = record_after(None, event)
        else:
            last = batch.last.get(run_id)
            if last is None:
                last = known(run_id)
                if last is None or event.seq != last + 1:  # another writer may have added
                    last = conn.execute(LAST_SEQ, (run_id,)).fetchone()[0]  # type: ignore[index]
            check_follows(event, last)
            if isinstance(event, ROW_EVENTS):
                record = batch.records.get(run_id) or _stored_record(conn, run_id, where)
                record = dataclasses.replace(record, last_seq=event.seq - 1)
                batch.records[run_id] = record_after(record, event)
        line = encode(event) if lines is None else lines[index]
        batch.rows.append((run_id, event.seq, event.type, event.ts, line))
        batch.last[run_id] = event.seq
    return batch


def _stored_record(conn: psycopg.Connection[tuple[Any, ...]], run_id: str, where: str) -> RunRecord:
    row = conn.execute(SELECT_RUN + " WHERE r.run_id = %s FOR UPDATE OF r", (run_id,)).fetchone()
    if row is None:
        raise StoreError(f"run {run_id} has events but no row in {where}")
    return record_of(row, now=None)


def write_batch(conn: psycopg.Connection[tuple[Any, ...]], batch: Batch, where: str) -> None:
    """The run rows, event rows and NOTIFYs of a planned batch (in the caller's
    transaction); a run started twice is refused."""
    with conn.cursor() as cur:
        for run_id, record in batch.records.items():
            if run_id in batch.started:
                if not cur.execute(INSERT_RUN, run_row(record)).rowcount:
                    raise StoreError(f"run {run_id} is already in {where}: it started before")
            else:
                cur.execute(UPDATE_RUN, row_update(record))
        cur.executemany(INSERT_EVENT, batch.rows)
        for run_id, seq in batch.last.items():
            cur.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload(run_id, seq)))
