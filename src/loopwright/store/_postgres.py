"""PostgresRunStore: the run store shared by processes and machines, on PostgreSQL.

The same RunStore contract as SqliteRunStore (one conformance suite runs on both), through
psycopg 3 and a connection pool. An append is one transaction: the event rows, the run's
row when an event changes it, and a NOTIFY naming the run and its newest seq (the live tail,
store/_pg_listen.py); store/_pg_append.py works out and writes its statements. The primary
key (run_id, seq) and a check that each seq follows the stored one keep every run's log
gap-free under concurrent appenders, across machines.

Leases are rows taken and renewed with one atomic upsert (the row lock decides between
racing processes). Without an injected clock, lease times are the database server's clock,
so machines with skewed clocks still agree on who holds a run.

The URL's password never appears in a message: `path` is the URL with it redacted.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from loopwright.clock import Clock
from loopwright.errors import ConfigurationError, EventDecodeError, StoreError
from loopwright.events import Event, decode_event
from loopwright.store._base import GateDecision, Lease, RunLookup, RunRecord, StoredStatus
from loopwright.store._pg_append import plan_batch, quick_rows, write_batch, write_rows
from loopwright.store._pg_errors import Redactor
from loopwright.store._pg_listen import EventListener
from loopwright.store._pg_schema import check_version, migrate
from loopwright.store._pg_sql import ACQUIRE, LAST_SEQ, NOW, REGISTER_RUN, SELECT_RUN, S
from loopwright.store._rows import record_of, run_row
from loopwright.store._text import row_text, storable_text

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

POOL_SIZE = 4
CONNECT_TIMEOUT_S = 10
TAIL_FALLBACK_S = 1.0
"""A waiting tail reads again at least this often while the LISTEN connection is down."""


class PostgresRunStore(RunLookup):
    """The RunStore protocol over a PostgreSQL database (`postgresql://user:pw@host/db`).

    The database must hold the store's schema (`loopwright store migrate --store URL`, or
    `migrate=True`). `clock` decides when leases lapse (a MockClock in tests); without one,
    the database server's clock does. Safe to share between threads.
    """

    def __init__(
        self,
        url: str,
        *,
        clock: Clock | None = None,
        migrate: bool = False,
        pool_size: int = POOL_SIZE,
        connect_timeout: float = CONNECT_TIMEOUT_S,
    ) -> None:
        self._redact = Redactor(url)
        self.path = self._redact.where
        self.clock = clock
        self._url = url
        self._last_seq: dict[str, int] = {}
        self._lock = threading.Lock()
        self._listener: EventListener | None = None
        self._pool = self._open(url, migrate, pool_size, connect_timeout)

    def __repr__(self) -> str:
        return f"PostgresRunStore({self.path!r})"

    def _open(self, url: str, upgrade: bool, size: int, timeout: float) -> ConnectionPool:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:  # the caller chose a store its install cannot open
            raise ConfigurationError(
                f"the run store {self.path} needs the postgres extra (psycopg is not "
                "installed): pip install 'loopwright[postgres]'"
            ) from None
        try:
            probe = psycopg.connect(url, autocommit=True, connect_timeout=int(timeout))
        except psycopg.Error as exc:
            raise self._redact.failure(exc, connecting=True) from None
        try:
            with probe:
                self.migrated_from = (migrate if upgrade else check_version)(probe, self.path)
        except psycopg.Error as exc:
            raise self._redact.failure(exc) from None
        pool = ConnectionPool(
            url, min_size=1, max_size=size, kwargs={"autocommit": True}, open=False,
            name="loopwright-store", timeout=30.0,
        )  # fmt: skip
        try:
            pool.open(wait=True, timeout=timeout)
        except Exception as exc:
            pool.close()
            raise self._redact.failure(exc, connecting=True) from None
        return pool

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """A pooled connection; any database failure becomes a StoreError."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection() as conn:
                yield conn
        except (psycopg.Error, PoolTimeout) as exc:
            with self._lock:
                self._last_seq.clear()
            raise self._redact.failure(exc) from None

    def _now(self) -> float | None:
        return None if self.clock is None else self.clock.time()

    # --- writing ---------------------------------------------------------------------------

    def append(self, event: Event) -> None:
        """One event, durably, in one transaction (one round trip for most events)."""
        self.append_many((event,))

    def append_many(self, events: Sequence[Event], lines: Sequence[str] | None = None) -> None:
        """The events in one transaction: all stored, or none. Events that only add to
        runs whose last seq this store knows are one statement (one round trip)."""
        if not events:
            return
        with self._lock:
            quick = quick_rows(events, lines, self._last_seq)
        if quick is not None:
            rows, last = quick
            with self._conn() as conn:
                write_rows(conn, rows, last)
        else:
            with self._conn() as conn, conn.transaction():
                batch = plan_batch(conn, events, lines, self._known_seq, self.path)
                write_batch(conn, batch, self.path)
            last = batch.last
        with self._lock:
            self._last_seq.update(last)

    def _known_seq(self, run_id: str) -> int | None:
        """The last seq of the run this store appended (None: not known here)."""
        with self._lock:
            return self._last_seq.get(run_id)

    def register_run(self, record: RunRecord) -> None:
        queued = dataclasses.replace(record, status="queued")
        with self._conn() as conn:
            if not conn.execute(REGISTER_RUN, run_row(queued)).rowcount:
                raise StoreError(f"run {record.run_id} is already in {self.path}")

    def set_status(self, run_id: str, status: StoredStatus) -> None:
        with self._conn() as conn:
            changed = conn.execute(
                f"UPDATE {S}.runs SET status = %s WHERE run_id = %s", (status, run_id)
            ).rowcount
        if not changed:
            raise StoreError(f"no run {run_id!r} in {self.path}")

    # --- reading ---------------------------------------------------------------------------

    def events(self, run_id: str, *, after: int = 0) -> list[Event]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT data FROM {S}.events WHERE run_id = %s AND seq > %s ORDER BY seq",
                (run_id, after),
            ).fetchall()
        try:
            return [decode_event(row[0]) for row in rows]
        except EventDecodeError as exc:
            raise StoreError(f"run {run_id} in {self.path}: {exc}") from None

    def _records(self, sql: str, params: Sequence[Any] | dict[str, Any]) -> list[RunRecord]:
        with self._conn() as conn:
            rows = conn.execute(sql, params).fetchall()
        now = self._now()
        return [record_of(row, now=row[21] if now is None else now) for row in rows]

    def get_run(self, run_id: str, *, tenant: str | None = None) -> RunRecord | None:
        records = self._records(SELECT_RUN + " WHERE r.run_id = %s", (run_id,))
        if not records or (tenant is not None and records[0].tenant != tenant):
            return None
        return records[0]

    def list_runs(
        self, *, tenant: str | None = None, status: str | None = None, limit: int = 100
    ) -> list[RunRecord]:
        where: list[str] = []
        params: dict[str, Any] = {"limit": limit}
        if tenant is not None:
            where.append("r.tenant = %(tenant)s")
            params["tenant"] = tenant
        live = status in ("running", "interrupted")  # decided by the lease, row by row
        if status is not None:
            where.append("r.status = %(status)s")
            params["status"] = "running" if live else status
        sql = SELECT_RUN + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY r.created_at DESC, r.run_id" + ("" if live else " LIMIT %(limit)s")
        records = self._records(sql, params)
        if live:
            records = [r for r in records if r.status == status][:limit]
        return records

    def follow_ups(self, run_id: str, *, tenant: str | None = None) -> list[RunRecord]:
        sql = SELECT_RUN + " WHERE r.after_run_id = %(run_id)s"
        params: dict[str, Any] = {"run_id": run_id}
        if tenant is not None:
            sql += " AND r.tenant = %(tenant)s"
            params["tenant"] = tenant
        return self._records(sql + " ORDER BY r.created_at, r.run_id", params)

    def run_ids_starting(
        self, prefix: str, *, tenant: str | None = None, limit: int = 10
    ) -> list[str]:
        sql = f"SELECT run_id FROM {S}.runs WHERE left(run_id, %s) = %s"
        params: list[object] = [len(prefix), prefix]
        if tenant is not None:
            sql += " AND tenant = %s"
            params.append(tenant)
        with self._conn() as conn:
            rows = conn.execute(sql + " ORDER BY run_id LIMIT %s", [*params, limit]).fetchall()
        return [str(row[0]) for row in rows]

    # --- the live tail -----------------------------------------------------------------------

    async def wait_for_events(self, run_id: str, *, after: int, timeout: float) -> bool:
        """Wait until the run has an event with seq > after (True), or `timeout` s (False).

        Woken by the NOTIFY of the append's commit; reads again at least every
        TAIL_FALLBACK_S while the LISTEN connection is down."""
        import asyncio
        import time

        listener = self._listening()
        deadline = time.monotonic() + timeout
        with listener.watch(run_id) as waiter:
            while True:
                waiter.event.clear()
                if waiter.seq > after or self._stored_after(run_id, after):
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if not listener.listening.is_set():
                    left = min(left, TAIL_FALLBACK_S)
                try:
                    async with asyncio.timeout(left):
                        await waiter.event.wait()
                except TimeoutError:
                    pass

    def _listening(self) -> EventListener:
        with self._lock:
            started = self._listener is None
            if self._listener is None:
                self._listener = EventListener(self._url)
            listener = self._listener
        if started:  # the first tail waits for LISTEN (a commit before it would be missed)
            listener.listening.wait(CONNECT_TIMEOUT_S)
        return listener

    def _stored_after(self, run_id: str, after: int) -> bool:
        with self._conn() as conn:
            row = conn.execute(LAST_SEQ, (run_id,)).fetchone()
        return row is not None and row[0] is not None and int(row[0]) > after

    # --- leases ----------------------------------------------------------------------------

    def acquire_lease(self, run_id: str, owner: str, ttl_s: float) -> bool:
        params = {"run_id": run_id, "owner": owner, "ttl": ttl_s, "now": self._now()}
        with self._conn() as conn:
            return conn.execute(ACQUIRE, params).fetchone() is not None

    def release_lease(self, run_id: str, owner: str) -> None:
        with self._conn() as conn:
            conn.execute(
                f"DELETE FROM {S}.leases WHERE run_id = %s AND owner = %s", (run_id, owner)
            )

    def lease(self, run_id: str) -> Lease | None:
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT owner, expires_at FROM {S}.leases WHERE run_id = %s", (run_id,)
            ).fetchone()
        return None if row is None else Lease(str(row[0]), float(row[1]))

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
        params = {
            "run_id": run_id, "request_id": request_id, "approved": approved,
            "decided_by": storable_text(decided_by),
            "now": self._now() if decided_at is None else decided_at,
        }  # fmt: skip
        with self._conn() as conn:
            inserted = conn.execute(
                f"INSERT INTO {S}.gate_decisions (run_id, request_id, approved, decided_by, "
                f"decided_at) VALUES (%(run_id)s, %(request_id)s, %(approved)s, "
                f"%(decided_by)s, {NOW}) ON CONFLICT DO NOTHING",
                params,
            ).rowcount
        return inserted == 1

    def gate_decision(self, run_id: str, request_id: str) -> GateDecision | None:
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT approved, decided_by, decided_at FROM {S}.gate_decisions "
                "WHERE run_id = %s AND request_id = %s",
                (run_id, request_id),
            ).fetchone()
        if row is None:
            return None
        who = row_text(str(row[1])) or ""
        return GateDecision(run_id, request_id, bool(row[0]), who, float(row[2]))

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
        self._pool.close()
