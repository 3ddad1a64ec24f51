"""Faults at the run store, injected in the real PostgreSQL server: an insert of chosen
events (or of the first lease) that waits (a trigger takes an advisory lock the test
holds) until the test lets it through, or kills the worker that made it and ends its
connection, so its transaction never commits."""

from __future__ import annotations

import asyncio
import time

import psycopg

LOCK = 4242
_TRIGGER = """
CREATE SEQUENCE IF NOT EXISTS public.lw_block_seq;
CREATE OR REPLACE FUNCTION public.lw_block() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.type = '{event}' AND NEW.data LIKE '%{tool}%'
     AND nextval('public.lw_block_seq') = 1 THEN
    PERFORM pg_advisory_xact_lock_shared({lock});
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER lw_block BEFORE INSERT ON loopwright.events
  FOR EACH ROW EXECUTE FUNCTION public.lw_block();
"""


_LEASE_TRIGGER = """
CREATE SEQUENCE IF NOT EXISTS public.lw_lease_seq;
CREATE OR REPLACE FUNCTION public.lw_block_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF nextval('public.lw_lease_seq') = 1 THEN
    PERFORM pg_advisory_xact_lock_shared({lock});
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER lw_block_lease BEFORE INSERT ON loopwright.leases
  FOR EACH ROW EXECUTE FUNCTION public.lw_block_lease();
"""


class BlockedInsert:
    """The first insert of a `tool_call_started` of `tool` (or of another `event` type,
    of any run when `tool` is empty) waits while this holds its lock."""

    def __init__(self, url: str, tool: str, *, event: str = "tool_call_started") -> None:
        assert (tool == "" or tool.isidentifier()) and event.isidentifier()
        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute(_TRIGGER.format(tool=tool, event=event, lock=LOCK))
        self.conn.execute("SELECT pg_advisory_lock(%s)", (LOCK,))

    @classmethod
    def first_lease(cls, url: str) -> BlockedInsert:
        """The first lease any run's executor takes waits instead (an insert into the
        leases table, whether or not it finds a row to update)."""
        blocked = cls.__new__(cls)
        blocked.conn = psycopg.connect(url, autocommit=True)
        blocked.conn.execute(_LEASE_TRIGGER.format(lock=LOCK))
        blocked.conn.execute("SELECT pg_advisory_lock(%s)", (LOCK,))
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
