"""SqliteRunStore: the default run store, one SQLite file in WAL mode.

Each append is one short transaction (the event row and the run's row together), so a
process killed at any moment leaves every run with a gap-free prefix of its events.
`synchronous=NORMAL` in WAL mode loses nothing when a process dies; only a power cut can
drop the last few commits, never corrupt the file.

A run whose row says `running` but whose lease has lapsed (its process stopped renewing
it), or whose lease holder is a process on this host that has exited, is reported as
`interrupted`.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from loopwright.clock import Clock, SystemClock
from loopwright.errors import StoreError
from loopwright.events import (
    SCHEMA_VERSION,
    Event,
    EventDecodeError,
    RunFinished,
    RunStarted,
    TaskComplete,
    TaskStart,
    decode_event,
)
from loopwright.store._base import GateDecision, Lease, RunRecord, StoredStatus
from loopwright.store._memory import record_after
from loopwright.store._owners import owner_is_gone
from loopwright.store._schema import check_and_migrate

_INSERT_EVENT = "INSERT INTO events (run_id, seq, type, ts, data) VALUES (?, ?, ?, ?, ?)"
_INSERT_RUN = """INSERT INTO runs (run_id, tenant, kind, status, request, model, created_at,
    input_tokens, output_tokens, cost, answer, reason, parent_run_id, options, tools)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
_UPDATE_RUN = """UPDATE runs SET status = ?, request = ?, input_tokens = ?, output_tokens = ?,
    cost = ?, answer = ?, reason = ? WHERE run_id = ?"""
_LAST_EVENT = """(SELECT e.seq FROM events e WHERE e.run_id = r.run_id ORDER BY e.seq DESC
    LIMIT 1), (SELECT e.ts FROM events e WHERE e.run_id = r.run_id ORDER BY e.seq DESC LIMIT 1)"""
_SELECT_RUN = f"""SELECT r.run_id, r.tenant, r.kind, r.status, r.request, r.model, r.created_at,
    {_LAST_EVENT}, r.input_tokens, r.output_tokens, r.cost, r.answer, r.reason,
    r.parent_run_id, r.options, r.tools, l.expires_at, l.owner
    FROM runs r LEFT JOIN leases l ON l.run_id = r.run_id"""
WAL_CHECKPOINT_PAGES = 10_000
WAL_SIZE_LIMIT = 64 * 1024 * 1024
_ROW_EVENTS = (RunFinished, TaskStart, TaskComplete)
"""Events that change a run's row (besides run_started, which creates it)."""
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
_FIELDS: dict[type[Any], tuple[str, ...]] = {}


def _encode(event: Event) -> str:
    """`encode_event(event)`, byte for byte, with the field names and encoder kept."""
    names = _FIELDS.get(type(event))
    if names is None:
        names = _FIELDS[type(event)] = tuple(f.name for f in dataclasses.fields(event))
    data = {name: getattr(event, name) for name in names}
    data["v"] = SCHEMA_VERSION
    return _ENCODER.encode(data)


class SqliteRunStore:
    """The RunStore protocol over one SQLite file (created, with its folders, on first use).

    `clock` decides when leases lapse (inject a MockClock in tests). Safe to share
    between threads (the lease heartbeat renews from its own thread).
    """

    def __init__(self, path: str | Path, *, clock: Clock | None = None) -> None:
        self.path = str(path)
        self.clock = clock or SystemClock()
        if self.path != ":memory:":
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self.path = str(Path(self.path).expanduser())
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=10.0
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open run store {self.path}: {exc}") from None
        try:
            self._conn.execute("PRAGMA busy_timeout = 10000")
            self.migrated_from = check_and_migrate(self._conn, self.path)
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            # a checkpoint (which syncs) every ~10,000 appends instead of every ~1,000
            self._conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
            self._conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
        except BaseException:
            self._conn.close()
            raise
        self._last_seq: dict[str, int] = {}
        """The newest seq of each run appended through this store (checked for gaps)."""

    # --- writing ---------------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"run store {self.path}: {exc}") from None
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                conn.execute("ROLLBACK")
                self._last_seq.clear()
                if isinstance(exc, sqlite3.IntegrityError):
                    raise StoreError(f"run store {self.path}: {exc}") from None
                raise

    def append(self, event: Event) -> None:
        """One event, durably (a process killed right after still has it).

        Most events are one INSERT in its own transaction; an event that changes the
        run's row writes both in one transaction.
        """
        if isinstance(event, RunStarted | RunFinished | TaskStart | TaskComplete):
            with self._transaction() as conn:
                self._append(conn, event)
            return
        with self._lock:
            try:
                self._append(self._conn, event)
            except sqlite3.Error as exc:
                self._last_seq.clear()
                raise StoreError(f"run store {self.path}: {exc}") from None

    def append_many(self, events: Sequence[Event]) -> None:
        with self._transaction() as conn:
            for event in events:
                self._append(conn, event)

    def _append(self, conn: sqlite3.Connection, event: Event) -> None:
        run_id = event.run_id
        if isinstance(event, RunStarted):
            record = record_after(None, event)
            conn.execute(_INSERT_RUN, _run_row(record))
        else:
            last = self._last_seq.get(run_id)
            if last is None:
                row = conn.execute(
                    "SELECT max(seq) FROM events WHERE run_id = ?", (run_id,)
                ).fetchone()
                last = row[0]
            if last is None:
                raise StoreError(f"event {event.type} for unknown run {run_id}: no run_started")
            if event.seq != last + 1:
                raise StoreError(f"run {run_id}: event seq {event.seq} does not follow {last}")
            if isinstance(event, _ROW_EVENTS):
                self._update_row(conn, event)
        conn.execute(_INSERT_EVENT, (run_id, event.seq, event.type, event.ts, _encode(event)))
        self._last_seq[run_id] = event.seq

    def _update_row(self, conn: sqlite3.Connection, event: Event) -> None:
        row = conn.execute(_SELECT_RUN + " WHERE r.run_id = ?", (event.run_id,)).fetchone()
        record = record_after(_record(row, now=None), event)
        conn.execute(
            _UPDATE_RUN,
            (
                record.status,
                record.request,
                record.input_tokens,
                record.output_tokens,
                record.cost,
                record.answer,
                record.reason,
                record.run_id,
            ),
        )

    def set_status(self, run_id: str, status: StoredStatus) -> None:
        with self._transaction() as conn:
            changed = conn.execute(
                "UPDATE runs SET status = ? WHERE run_id = ?", (status, run_id)
            ).rowcount
        if not changed:
            raise StoreError(f"no run {run_id!r} in {self.path}")

    # --- reading ---------------------------------------------------------------------------

    def events(self, run_id: str, *, after: int = 0) -> list[Event]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT data FROM events WHERE run_id = ? AND seq > ? ORDER BY seq",
                (run_id, after),
            ).fetchall()
        try:
            return [decode_event(row[0]) for row in rows]
        except EventDecodeError as exc:
            raise StoreError(f"run {run_id} in {self.path}: {exc}") from None

    def get_run(self, run_id: str, *, tenant: str | None = None) -> RunRecord | None:
        with self._lock:
            row = self._conn.execute(_SELECT_RUN + " WHERE r.run_id = ?", (run_id,)).fetchone()
        if row is None or (tenant is not None and row[1] != tenant):
            return None
        return _record(row, now=self.clock.time())

    def list_runs(
        self, *, tenant: str | None = None, status: str | None = None, limit: int = 100
    ) -> list[RunRecord]:
        now = self.clock.time()
        where: list[str] = []
        params: dict[str, object] = {"now": now, "limit": limit}
        if tenant is not None:
            where.append("r.tenant = :tenant")
            params["tenant"] = tenant
        live = status in ("running", "interrupted")  # decided by the lease, row by row
        if status is not None:
            where.append("r.status = :status")
            params["status"] = "running" if live else status
        sql = _SELECT_RUN + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY r.created_at DESC, r.run_id" + ("" if live else " LIMIT :limit")
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        records = [_record(row, now=now) for row in rows]
        if live:
            records = [r for r in records if r.status == status][:limit]
        return records

    # --- leases ----------------------------------------------------------------------------

    def acquire_lease(self, run_id: str, owner: str, ttl_s: float) -> bool:
        now = self.clock.time()
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT owner, expires_at FROM leases WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is not None and row[0] != owner and row[1] > now:
                return False
            conn.execute(
                "INSERT OR REPLACE INTO leases (run_id, owner, expires_at) VALUES (?, ?, ?)",
                (run_id, owner, now + ttl_s),
            )
        return True

    def release_lease(self, run_id: str, owner: str) -> None:
        with self._transaction() as conn:
            conn.execute("DELETE FROM leases WHERE run_id = ? AND owner = ?", (run_id, owner))

    def lease(self, run_id: str) -> Lease | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT owner, expires_at FROM leases WHERE run_id = ?", (run_id,)
            ).fetchone()
        return None if row is None else Lease(str(row[0]), float(row[1]))

    # --- gate decisions from other processes ---------------------------------------------

    def post_gate_decision(
        self, run_id: str, request_id: str, approved: bool, decided_by: str
    ) -> bool:
        with self._transaction() as conn:
            inserted = conn.execute(
                "INSERT OR IGNORE INTO gate_decisions (run_id, request_id, approved, "
                "decided_by, decided_at) VALUES (?, ?, ?, ?, ?)",
                (run_id, request_id, int(approved), decided_by, self.clock.time()),
            ).rowcount
        return inserted == 1

    def gate_decision(self, run_id: str, request_id: str) -> GateDecision | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT approved, decided_by, decided_at FROM gate_decisions "
                "WHERE run_id = ? AND request_id = ?",
                (run_id, request_id),
            ).fetchone()
        if row is None:
            return None
        return GateDecision(run_id, request_id, bool(row[0]), str(row[1]), float(row[2]))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _run_row(record: RunRecord) -> tuple[Any, ...]:
    return (
        record.run_id,
        record.tenant,
        record.kind,
        record.status,
        record.request,
        record.model,
        record.created_at,
        record.input_tokens,
        record.output_tokens,
        record.cost,
        record.answer,
        record.reason,
        record.parent_run_id,
        json.dumps(record.options, ensure_ascii=False, default=str),
        json.dumps(list(record.tools), ensure_ascii=False),
    )


def _record(row: Sequence[Any], *, now: float | None) -> RunRecord:
    """A row of _SELECT_RUN; with `now`, a running run is `interrupted` if its lease has
    lapsed or its owner is a process on this host that has exited."""
    status = row[3]
    if now is not None and status == "running":
        expires_at, owner = row[17], row[18]
        if expires_at is None or expires_at <= now or owner_is_gone(owner):
            status = "interrupted"
    return RunRecord(
        run_id=row[0],
        tenant=row[1],
        kind=row[2],
        status=status,
        request=row[4],
        model=row[5],
        created_at=row[6],
        last_seq=row[7],
        updated_at=row[8],
        input_tokens=row[9],
        output_tokens=row[10],
        cost=row[11],
        answer=row[12],
        reason=row[13],
        parent_run_id=row[14],
        options=json.loads(row[15]),
        tools=tuple(json.loads(row[16])),
    )
