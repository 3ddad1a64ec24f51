"""The content store of Temporal runs, on the run store's PostgreSQL database.

Workflow history carries references and small values only; what grows with a run lives
here, in the `loopwright_temporal` schema (version 1):

- `requests`: the messages of each model call, by (run_id, call): a model activity gets
  only the messages that are new since the previous call and loads the rest from here, so
  its input does not grow with the run. They hold the request as it was given and the
  model's replies as it made them (the model gets them so, as on the embedded engine), so
  they are sealed with the deployment's payload key (version 4; engines/temporal/_codec.py),
  bound to their row: the database holds no text of them. Rows of an earlier version are
  read as they are.
- `tool_calls`: one row per idempotency key (`run_id:tool_call_id`): `started` before the
  tool runs, then `done` with its result. First writer wins: a retried activity returns
  the committed result instead of calling the tool again, and a tool that is not
  idempotent is never run twice (an attempt that finds only `started` reports an uncertain
  outcome). A result longer than the run's tool output limit is kept here whole
  (`full_result`); the run, its events and the model get the same truncated text as on
  the embedded engine, so no workflow payload carries it.
- `blobs` (version 2): long tool results by (run_id, SHA-256), which the workflow holds
  as references (engines/temporal/_refs.py) and activities expand again.

Every string a model or a tool can produce reads back exactly (version 3). Messages and
results are `json` columns, not `jsonb`: `json` keeps the document's text as it was sent,
escapes and all, where `jsonb` refuses a NUL (`\\u0000`) and a lone surrogate; nothing
queries inside them. The text columns (a full result, a blob) hold such a text escaped, as
the run stores do (`storable_text` / `row_text`). Tool results are scrubbed before they get
here (by the tool executor, with the worker's secrets), as in the events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from loopwright.engines.temporal._codec import PayloadCipher, load_cipher
from loopwright.errors import StoreError
from loopwright.messages import Message, ToolResult
from loopwright.store._pg_errors import Redactor
from loopwright.store._text import row_text, storable_text

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

SCHEMA = "loopwright_temporal"
VERSION = 4
_DDL = f"""
CREATE SCHEMA IF NOT EXISTS {SCHEMA};
CREATE TABLE IF NOT EXISTS {SCHEMA}.version (version integer NOT NULL);
CREATE TABLE IF NOT EXISTS {SCHEMA}.requests (
    run_id text NOT NULL, call integer NOT NULL, messages json NOT NULL,
    PRIMARY KEY (run_id, call));
CREATE TABLE IF NOT EXISTS {SCHEMA}.tool_calls (
    key text PRIMARY KEY, run_id text NOT NULL, state text NOT NULL,
    result json, attempts integer NOT NULL DEFAULT 1,
    started_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz,
    full_result text);
CREATE TABLE IF NOT EXISTS {SCHEMA}.blobs (
    run_id text NOT NULL, digest text NOT NULL, content text NOT NULL,
    PRIMARY KEY (run_id, digest));
"""


class ContentStore:
    """Requests and tool results of Temporal runs (one connection pool per worker)."""

    def __init__(self, url: str, *, cipher: PayloadCipher | None = None, size: int = 4) -> None:
        """`cipher`: the deployment's payload key, which seals the messages (by default
        the key file's, which must exist)."""
        self._cipher = cipher or load_cipher(make=False)
        self._redact = Redactor(url)
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise StoreError(
                "the Temporal engine needs psycopg: pip install 'loopwright[temporal]'"
            ) from None
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                _migrate(conn)
        except psycopg.Error as exc:
            failure = self._redact.failure(exc, connecting=True)
            raise type(failure)(
                f"the Temporal content store could not be prepared: {failure}"
            ) from None
        self._pool: ConnectionPool = ConnectionPool(
            url, min_size=1, max_size=size, kwargs={"autocommit": True}, open=True,
            check=ConnectionPool.check_connection, timeout=10.0,
        )  # fmt: skip

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """A pooled connection; a database failure becomes a StoreError (one that can
        pass, a dropped connection or an unreachable server: StoreUnavailableError)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection() as conn:
                yield conn
        except (psycopg.Error, PoolTimeout) as exc:
            failure = self._redact.failure(exc)
            raise type(failure)(f"the Temporal content store failed: {failure}") from None

    def save_request(self, run_id: str, call: int, messages: list[Message]) -> None:
        text = json.dumps([m.to_dict() for m in messages])
        sealed = self._cipher.seal_text(text, _request_row(run_id, call))
        data = json.dumps({"sealed": sealed, "key": self._cipher.key_id})
        with self._conn() as conn:
            conn.execute(
                f"INSERT INTO {SCHEMA}.requests (run_id, call, messages) VALUES (%s, %s, %s) "
                "ON CONFLICT (run_id, call) DO NOTHING",
                (run_id, call, data),
            )

    def load_request(self, run_id: str, call: int) -> list[Message]:
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT messages FROM {SCHEMA}.requests WHERE run_id = %s AND call = %s",
                (run_id, call),
            ).fetchone()
        if row is None:
            raise StoreError(f"run {run_id}: the messages of model call {call} are not stored")
        data = row[0]
        if isinstance(data, dict):  # sealed (version 4); a list: a row of an earlier version
            text = self._cipher.open_text(data["sealed"], data["key"], _request_row(run_id, call))
            data = json.loads(text)
        return [Message.from_dict(m) for m in data]

    def claim_tool_call(self, key: str, run_id: str) -> tuple[str, ToolResult | None]:
        """Record that the call `key` starts. ("new", None) when this attempt is the first;
        else the state found: ("done", result) or ("started", None)."""
        with self._conn() as conn:
            inserted = conn.execute(
                f"INSERT INTO {SCHEMA}.tool_calls (key, run_id, state) VALUES (%s, %s, 'started') "
                "ON CONFLICT (key) DO NOTHING RETURNING 1",
                (key, run_id),
            ).fetchone()
            if inserted is not None:
                return "new", None
            row = conn.execute(
                f"UPDATE {SCHEMA}.tool_calls SET attempts = attempts + 1 WHERE key = %s "
                "RETURNING state, result",
                (key,),
            ).fetchone()
        assert row is not None
        return str(row[0]), (_result(row[1]) if row[0] == "done" else None)

    def finish_tool_call(
        self, key: str, result: ToolResult, full_result: str | None = None
    ) -> ToolResult:
        """Commit the result (first writer wins); the committed one is returned."""
        data = json.dumps(_result_dict(result))
        with self._conn() as conn:
            row = conn.execute(
                f"UPDATE {SCHEMA}.tool_calls SET state = 'done', result = %s, full_result = %s, "
                "finished_at = now() WHERE key = %s AND state = 'started' RETURNING 1",
                (data, storable_text(full_result), key),
            ).fetchone()
            if row is not None:
                return result
            stored = conn.execute(
                f"SELECT result FROM {SCHEMA}.tool_calls WHERE key = %s", (key,)
            ).fetchone()
        return _result(stored[0]) if stored and stored[0] is not None else result

    def tool_call(self, key: str) -> tuple[str, ToolResult | None, int] | None:
        """(state, committed result, attempts) of the call `key`, None if it never started."""
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT state, result, attempts FROM {SCHEMA}.tool_calls WHERE key = %s",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return str(row[0]), (_result(row[1]) if row[1] is not None else None), int(row[2])

    def full_result(self, key: str) -> str | None:
        """The whole result of the call `key` when it was longer than the run's limit."""
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT full_result FROM {SCHEMA}.tool_calls WHERE key = %s", (key,)
            ).fetchone()
        return None if row is None or row[0] is None else row_text(str(row[0]))

    def save_blobs(self, run_id: str, texts: dict[str, str]) -> None:
        """Store texts by digest (a text stored before stays as it is)."""
        if not texts:
            return
        with self._conn() as conn, conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {SCHEMA}.blobs (run_id, digest, content) VALUES (%s, %s, %s) "
                "ON CONFLICT (run_id, digest) DO NOTHING",
                [(run_id, digest, storable_text(text)) for digest, text in texts.items()],
            )

    def blobs(self, run_id: str, digests: Iterable[str]) -> dict[str, str]:
        """The stored texts of `digests` (of run `run_id`), by digest."""
        wanted = sorted(set(digests))
        if not wanted:
            return {}
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT digest, content FROM {SCHEMA}.blobs "
                "WHERE run_id = %s AND digest = ANY(%s)",
                (run_id, wanted),
            ).fetchall()
        return {str(row[0]): row_text(str(row[1])) or "" for row in rows}

    def close(self) -> None:
        self._pool.close()


def _migrate(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    conn.execute(f"SELECT pg_advisory_lock(hashtext('{SCHEMA}'))")
    try:
        conn.execute(_DDL)
        row = conn.execute(f"SELECT max(version) FROM {SCHEMA}.version").fetchone()
        found = row[0] if row else None
        if found is not None and found < 3:  # v2 -> v3: json keeps NUL, lone surrogates
            for table, column in (("requests", "messages"), ("tool_calls", "result")):
                conn.execute(
                    f"ALTER TABLE {SCHEMA}.{table} ALTER COLUMN {column} TYPE json "
                    f"USING {column}::json"
                )
        # v2's blobs table is made above; v4 seals new rows of requests, earlier ones are
        # read as they are
        if found is None or found < VERSION:
            conn.execute(f"INSERT INTO {SCHEMA}.version VALUES (%s)", (VERSION,))
        elif found > VERSION:
            raise StoreError(
                f"the Temporal content store has schema version {found}; this loopwright "
                f"reads {VERSION}: upgrade loopwright"
            )
    finally:
        conn.execute(f"SELECT pg_advisory_unlock(hashtext('{SCHEMA}'))")


def _request_row(run_id: str, call: int) -> str:
    return f"the messages of model call {call} of run {run_id}"


def _result_dict(result: ToolResult) -> dict[str, Any]:
    return {
        "call_id": result.call_id,
        "tool_name": result.tool_name,
        "content": result.content,
        "is_error": result.is_error,
        "duration_ms": result.duration_ms,
        "truncated": result.truncated,
        "redactions": result.redactions,
    }


def _result(data: dict[str, Any]) -> ToolResult:
    return ToolResult(**data)


result_dict = _result_dict
result_from_dict = _result
