"""SqliteRunStore: the default run store, one SQLite file in WAL mode.

Each append is one short transaction (the event row and the run's row together), so a
process killed at any moment leaves every run with a gap-free prefix of its events.
`synchronous=NORMAL` in WAL mode loses nothing when a process dies; only a power cut can
drop the last few commits, never corrupt the file.

A run whose row says `running` but whose lease has lapsed (its process stopped renewing
it), or whose lease holder is a process on this host that has exited, is reported as
`interrupted`.

A file that cannot be written (read-only file, folder or file system) is opened read-only:
its runs can be listed, shown and exported, and every write says why it cannot be done.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from loopwright.clock import Clock, SystemClock
from loopwright.errors import EventDecodeError, StoreError
from loopwright.events import Event, ModelResponseEvent, RunStartedEvent, decode_event
from loopwright.store._base import GateDecision, Lease, RunLookup, RunRecord, StoredStatus
from loopwright.store._memory import record_after, reply_tokens
from loopwright.store._rows import ROW_EVENTS, check_follows, encode, record_of, row_update, run_row
from loopwright.store._schema import (
    ADD_TOKENS,
    INSERT_EVENT,
    INSERT_RUN,
    LAST_SEQ,
    REGISTER_RUN,
    SCHEMA_VERSION,
    UPDATE_RUN,
    select_run,
)
from loopwright.store._sqlite_errors import store_failure
from loopwright.store._sqlite_open import open_store_file, store_path
from loopwright.store._text import row_text, storable_text

_ROW_KINDS = frozenset({RunStartedEvent, *ROW_EVENTS} - {ModelResponseEvent})
"""Events that make or change a run's row: never in a plain batch of event rows (a reply
only adds its tokens to the row: it goes in the batch, its tokens added after it)."""
TAIL_POLL_S = 0.02
"""How often a waiting tail looks for another connection's commits (`PRAGMA data_version`)."""


class SqliteRunStore(RunLookup):
    """The RunStore protocol over one SQLite file (created, with its folders, on first use).

    `clock` decides when leases lapse (inject a MockClock in tests). Safe to share
    between threads (the lease heartbeat renews from its own thread).
    """

    def __init__(self, path: str | Path, *, clock: Clock | None = None) -> None:
        self.path, cannot_write = store_path(path)
        self.clock = clock or SystemClock()
        self._lock = threading.RLock()
        self._watch: sqlite3.Connection | None = None
        self.read_only: str | None
        """Why the store cannot be written, or None for a writable store."""
        self._conn, self.migrated_from, self.read_only = open_store_file(self.path, cannot_write)
        self._select_run = select_run(self.migrated_from if self.read_only else SCHEMA_VERSION)
        self._last_seq: dict[str, int] = {}
        """The newest seq of each run appended through this store (checked for gaps)."""

    def _refuse_write(self) -> None:
        if self.read_only is not None:
            raise StoreError(
                f"run store {self.path} is read-only ({self.read_only}): its runs can be "
                f"listed, shown and exported; to run or resume, make it writable or pass "
                f"--store with a writable file"
            )

    # --- writing ---------------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._refuse_write()
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise store_failure(self.path, exc) from None
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:  # SQLite may have rolled it back itself (a full disk)
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                self._last_seq.clear()
                if isinstance(exc, sqlite3.Error):
                    raise store_failure(self.path, exc) from None
                raise

    def append(self, event: Event) -> None:
        """One event, durably (a process killed right after still has it).

        Most events are one INSERT in its own transaction; an event that changes the
        run's row writes both in one transaction.
        """
        if isinstance(event, (RunStartedEvent, *ROW_EVENTS)):
            with self._transaction() as conn:
                self._append(conn, event)
            return
        self._refuse_write()
        with self._lock:
            try:
                self._append(self._conn, event)
            except sqlite3.Error as exc:
                self._last_seq.clear()
                raise store_failure(self.path, exc) from None

    def append_many(self, events: Sequence[Event], lines: Sequence[str] | None = None) -> None:
        """Events in one transaction; a run of them that only adds rows (each the next `seq`
        of its run, no run row to change but the tokens its replies add) goes in one
        `executemany`, the tokens in one statement a run (added, not read and written)."""
        with self._transaction() as conn:
            rows: list[tuple[str, int, str, float, str]] = []
            tokens: dict[str, tuple[int, int]] = {}
            for index, event in enumerate(events):
                line = encode(event) if lines is None else lines[index]
                run_id = event.run_id
                last = self._last_seq.get(run_id)
                if last is not None and event.seq == last + 1 and type(event) not in _ROW_KINDS:
                    rows.append((run_id, event.seq, event.type, event.ts, line))
                    self._last_seq[run_id] = event.seq
                    if isinstance(event, ModelResponseEvent):
                        added_in, added_out = reply_tokens(event)
                        so_far_in, so_far_out = tokens.get(run_id, (0, 0))
                        tokens[run_id] = (so_far_in + added_in, so_far_out + added_out)
                    continue
                _add_rows(conn, rows, tokens)
                self._append(conn, event, line)
            _add_rows(conn, rows, tokens)

    def _append(self, conn: sqlite3.Connection, event: Event, line: str | None = None) -> None:
        run_id = event.run_id
        if isinstance(event, RunStartedEvent):
            if not conn.execute(INSERT_RUN, run_row(record_after(None, event))).rowcount:
                raise StoreError(f"run {run_id} is already in {self.path}: it started before")
        else:
            last = self._last_seq.get(run_id)
            if last is None or event.seq != last + 1:  # another writer may have added events
                last = conn.execute(LAST_SEQ, (run_id,)).fetchone()[0]
            check_follows(event, last)
            if isinstance(event, ROW_EVENTS):
                row = conn.execute(self._select_run + " WHERE r.run_id = ?", (run_id,)).fetchone()
                conn.execute(UPDATE_RUN, row_update(record_after(record_of(row, now=None), event)))
        line = encode(event) if line is None else line
        conn.execute(INSERT_EVENT, (run_id, event.seq, event.type, event.ts, line))
        self._last_seq[run_id] = event.seq

    def register_run(self, record: RunRecord) -> None:
        with self._transaction() as conn:
            queued = dataclasses.replace(record, status="queued")
            if not conn.execute(REGISTER_RUN, run_row(queued)).rowcount:
                raise StoreError(f"run {record.run_id} is already in {self.path}")

    def set_status(self, run_id: str, status: StoredStatus) -> None:
        with self._transaction() as conn:
            changed = conn.execute(
                "UPDATE runs SET status = ? WHERE run_id = ?", (status, run_id)
            ).rowcount
        if not changed:
            raise StoreError(f"no run {run_id!r} in {self.path}")

    # --- reading ---------------------------------------------------------------------------

    def _read(self, sql: str, params: Sequence[object] | dict[str, object]) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise store_failure(self.path, exc) from None

    def events(self, run_id: str, *, after: int = 0) -> list[Event]:
        rows = self._read(
            "SELECT data FROM events WHERE run_id = ? AND seq > ? ORDER BY seq", (run_id, after)
        )
        try:
            return [decode_event(row[0]) for row in rows]
        except EventDecodeError as exc:
            raise StoreError(f"run {run_id} in {self.path}: {exc}") from None

    def get_run(self, run_id: str, *, tenant: str | None = None) -> RunRecord | None:
        rows = self._read(self._select_run + " WHERE r.run_id = ?", (run_id,))
        if not rows or (tenant is not None and rows[0][1] != tenant):
            return None
        return record_of(rows[0], now=self.clock.time())

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
        sql = self._select_run + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY r.created_at DESC, r.run_id" + ("" if live else " LIMIT :limit")
        records = [record_of(row, now=now) for row in self._read(sql, params)]
        if live:
            records = [r for r in records if r.status == status][:limit]
        return records

    def follow_ups(self, run_id: str, *, tenant: str | None = None) -> list[RunRecord]:
        if self.read_only is not None and self.migrated_from < 4:
            return []  # no follow-up before v4, and this store cannot be migrated
        sql = self._select_run + " WHERE r.after_run_id = ?"
        params: list[object] = [run_id]
        if tenant is not None:
            sql += " AND r.tenant = ?"
            params.append(tenant)
        now = self.clock.time()
        rows = self._read(sql + " ORDER BY r.created_at, r.run_id", params)
        return [record_of(row, now=now) for row in rows]

    def run_ids_starting(
        self, prefix: str, *, tenant: str | None = None, limit: int = 10
    ) -> list[str]:
        sql = "SELECT run_id FROM runs WHERE run_id >= ? AND run_id < ?"  # the key's index
        params: list[object] = [prefix, prefix + "\U0010ffff"]
        if tenant is not None:
            sql += " AND tenant = ?"
            params.append(tenant)
        rows = self._read(sql + " ORDER BY run_id LIMIT ?", [*params, limit])
        return [str(row[0]) for row in rows]

    # --- the live tail -----------------------------------------------------------------------

    async def wait_for_events(self, run_id: str, *, after: int, timeout: float) -> bool:
        """Wait until the run has an event with seq > after (True), or `timeout` s (False).

        Another connection's commit changes `PRAGMA data_version` on a connection of our
        own that only reads; the run's last seq is read again only then."""
        deadline = time.monotonic() + timeout
        version = self._data_version()
        if self._stored_after(run_id, after):
            return True
        while (left := deadline - time.monotonic()) > 0:
            await asyncio.sleep(min(TAIL_POLL_S, left))
            now = self._data_version()
            if now != version:
                version = now
                if self._stored_after(run_id, after):
                    return True
        return self._stored_after(run_id, after)

    def _data_version(self) -> int:
        """A number that changes when another connection commits (each call differs where
        that cannot be known: an in-memory store, a file without its WAL index)."""
        with self._lock:
            try:
                if self._watch is None and self.path != ":memory:":
                    self._watch = sqlite3.connect(
                        f"file:{quote(self.path)}?mode=ro", uri=True, check_same_thread=False
                    )
                if self._watch is not None:
                    return int(self._watch.execute("PRAGMA data_version").fetchone()[0])
            except sqlite3.Error:
                pass
            return -time.monotonic_ns()

    def _stored_after(self, run_id: str, after: int) -> bool:
        last = self._read(LAST_SEQ, (run_id,))[0][0]
        return last is not None and int(last) > after

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
        rows = self._read("SELECT owner, expires_at FROM leases WHERE run_id = ?", (run_id,))
        return None if not rows else Lease(str(rows[0][0]), float(rows[0][1]))

    # --- gate decisions from other processes ---------------------------------------------

    def post_gate_decision(
        self,
        run_id: str,
        request_id: str,
        approved: bool,
        decided_by: str,
        *,
        decided_at: float | None = None,
    ) -> bool:
        when = self.clock.time() if decided_at is None else decided_at
        with self._transaction() as conn:
            inserted = conn.execute(
                "INSERT OR IGNORE INTO gate_decisions (run_id, request_id, approved, "
                "decided_by, decided_at) VALUES (?, ?, ?, ?, ?)",
                (run_id, request_id, int(approved), storable_text(decided_by), when),
            ).rowcount
        return inserted == 1

    def gate_decision(self, run_id: str, request_id: str) -> GateDecision | None:
        if self.read_only is not None and self.migrated_from < 2:
            return None  # a v1 store has no gate decisions, and this one cannot be migrated
        rows = self._read(
            "SELECT approved, decided_by, decided_at FROM gate_decisions "
            "WHERE run_id = ? AND request_id = ?",
            (run_id, request_id),
        )
        if not rows:
            return None
        approved, decided_by, decided_at = rows[0]
        who = row_text(str(decided_by)) or ""
        return GateDecision(run_id, request_id, bool(approved), who, float(decided_at))

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            if self._watch is not None:
                self._watch.close()


def _add_rows(
    conn: sqlite3.Connection,
    rows: list[tuple[str, int, str, float, str]],
    tokens: dict[str, tuple[int, int]],
) -> None:
    """Store the event rows gathered so far and add their replies' tokens to their runs'
    rows (emptying both)."""
    if rows:
        conn.executemany(INSERT_EVENT, rows)
        rows.clear()
    if tokens:
        conn.executemany(ADD_TOKENS, [(i, o, run_id) for run_id, (i, o) in tokens.items()])
        tokens.clear()
