"""The Postgres store's SQL: every statement PostgresRunStore sends, in one place."""

from __future__ import annotations

import functools

from loopwright.store._pg_listen import CHANNEL
from loopwright.store._pg_schema import SCHEMA

S = SCHEMA
NOW = "COALESCE(%(now)s::float8, extract(epoch from clock_timestamp())::float8)"
INSERT_EVENT = f"INSERT INTO {S}.events (run_id, seq, type, ts, data) VALUES (%s, %s, %s, %s, %s)"


@functools.cache
def append_rows(rows: int, notes: int) -> str:
    """One statement: `rows` events inserted, then a NOTIFY for each of `notes` runs (a
    multi-row VALUES, cheaper to send than arrays; one prepared statement per shape)."""
    values = ", ".join(["(%s, %s, %s, %s, %s)"] * rows)
    names = ", ".join(["(%s)"] * notes)
    return (
        f"WITH e AS (INSERT INTO {S}.events (run_id, seq, type, ts, data) VALUES {values}) "
        f"SELECT pg_notify('{CHANNEL}', n.note) FROM (VALUES {names}) AS n(note)"
    )


_RUN_COLUMNS = """run_id, tenant, kind, status, request, model, created_at, input_tokens,
    output_tokens, cost, answer, reason, parent_run_id, options, tools, engine, after_run_id"""
_RUN_VALUES = ", ".join(["%s"] * 17)
_FILLED_IN = ", ".join(
    f"{column} = excluded.{column}"
    for column in ("status", "request", "model", "input_tokens", "output_tokens", "cost",
                   "answer", "reason", "parent_run_id", "options", "tools", "after_run_id")
)  # fmt: skip
"""What `run_started` sets in a registered run's row (tenant, engine and creation time stay)."""
REGISTER_RUN = f"""INSERT INTO {S}.runs ({_RUN_COLUMNS}) VALUES ({_RUN_VALUES})
    ON CONFLICT (run_id) DO NOTHING"""
INSERT_RUN = f"""INSERT INTO {S}.runs AS r ({_RUN_COLUMNS}) VALUES ({_RUN_VALUES})
    ON CONFLICT (run_id) DO UPDATE SET {_FILLED_IN} WHERE r.status = 'queued'"""
"""`run_started`: a new row, or the queued row of a registered run filled in."""
UPDATE_RUN = f"""UPDATE {S}.runs SET status = %s, request = %s, input_tokens = %s,
    output_tokens = %s, cost = %s, answer = %s, reason = %s WHERE run_id = %s"""
SELECT_RUN = f"""SELECT r.run_id, r.tenant, r.kind, r.status, r.request, r.model, r.created_at,
    e.seq, e.ts, r.input_tokens, r.output_tokens, r.cost, r.answer, r.reason, r.parent_run_id,
    r.options, r.tools, r.engine, l.expires_at, l.owner, r.after_run_id,
    extract(epoch from clock_timestamp())::float8
    FROM {S}.runs r
    LEFT JOIN LATERAL (SELECT seq, ts FROM {S}.events WHERE run_id = r.run_id
        ORDER BY seq DESC LIMIT 1) e ON true
    LEFT JOIN {S}.leases l ON l.run_id = r.run_id"""
LAST_SEQ = f"SELECT max(seq) FROM {S}.events WHERE run_id = %s"
ACQUIRE = f"""INSERT INTO {S}.leases AS l (run_id, owner, expires_at)
    VALUES (%(run_id)s, %(owner)s, {NOW} + %(ttl)s::float8)
    ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
    WHERE l.owner = excluded.owner OR l.expires_at <= {NOW}
    RETURNING 1"""
