"""Faults at the run store, injected in the real PostgreSQL server: an insert of chosen
events (or of the first lease) that waits (a trigger takes an advisory lock the test
holds) until the test lets it through, or kills the worker that made it and ends its
connection, so its transaction never commits."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import psycopg

LOCK = 4242
_TRIGGER = """
CREATE SEQUENCE IF NOT EXISTS public.lw_block_seq;
CREATE OR REPLACE FUNCTION public.lw_block() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF {condition} nextval('public.lw_block_seq') = 1 THEN
    PERFORM pg_advisory_xact_lock_shared({lock});
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER lw_block BEFORE INSERT ON loopwright.{table}
  FOR EACH ROW EXECUTE FUNCTION public.lw_block();
"""
"""The first insert into `table` that meets `condition` (SQL ending in AND, or empty)."""


class BlockedInsert:
    """The first insert of a `tool_call_started` of `tool` (or of another `event` type,
    of any run when `tool` is empty) waits while this holds its lock."""

    def __init__(self, url: str, tool: str, *, event: str = "tool_call_started") -> None:
        assert (tool == "" or tool.isidentifier()) and event.isidentifier()
        condition = f"NEW.type = '{event}' AND NEW.data LIKE '%{tool}%' AND"
        self.conn = _blocking(url, "events", condition)

    @classmethod
    def first_lease(cls, url: str) -> BlockedInsert:
        """The first lease any run's executor takes waits instead (an insert into the
        leases table, whether or not it finds a row to update)."""
        blocked = cls.__new__(cls)
        blocked.conn = _blocking(url, "leases", "")
        return blocked

    async def waiting(self, limit_s: float = 60.0) -> int:
        """The server pid of the connection whose insert waits (once one does)."""
        deadline = time.monotonic() + limit_s
        while True:
            row = self.conn.execute(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = %s "
                "AND NOT granted",
                (LOCK,),
            ).fetchone()
            if row is not None:
                return int(row[0])
            assert time.monotonic() < deadline, "no insert waited"
            await asyncio.sleep(0.05)

    def abort(self, backend: int) -> None:
        """End the waiting insert's connection (its transaction rolls back), then let
        every later insert through."""
        self.conn.execute("SELECT pg_terminate_backend(%s)", (backend,))
        self.conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK,))

    def release(self) -> None:
        """Let the waiting insert, and every later one, through."""
        self.conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK,))

    def close(self) -> None:
        self.conn.close()


def _blocking(url: str, table: str, condition: str) -> psycopg.Connection[tuple[Any, ...]]:
    """A connection holding the lock the trigger on `table` makes its first insert wait for."""
    conn = psycopg.connect(url, autocommit=True)
    conn.execute(_TRIGGER.format(table=table, condition=condition, lock=LOCK))
    conn.execute("SELECT pg_advisory_lock(%s)", (LOCK,))
    return conn
