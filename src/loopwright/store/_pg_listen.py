"""The Postgres store's live tail: one LISTEN connection per store, in a daemon thread.

Each append's transaction sends `NOTIFY loopwright_events, 'SEQ:RUN_ID'` (the payload
carries only the run and its newest seq; Postgres limits payloads to 8,000 bytes), delivered
when it commits. The thread wakes the waiters of that run, which read the rows themselves.
A waiter registers before it reads, so a commit between its read and its wait still wakes
it. While the connection is down, waiters fall back to their timeout (a poll); when it is
back, every waiter is woken to read again: nothing is missed, nothing is read twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

CHANNEL = "loopwright_events"
MAX_PAYLOAD_RUN_ID = 7000
"""Longer run ids are not sent: an empty run id in a payload wakes every waiter."""
RECONNECT_S = (0.1, 0.5, 1.0, 2.0, 5.0)


def payload(run_id: str, seq: int) -> str:
    return f"{seq}:{run_id}" if len(run_id.encode()) <= MAX_PAYLOAD_RUN_ID else f"{seq}:"


class Waiter:
    """One waiting tail: `event` is set when its run may have new events; `seq` is the
    newest seq a notification named (0: unknown, read the store)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.event = asyncio.Event()
        self.seq = 0

    def wake(self, seq: int) -> None:
        self.seq = max(self.seq, seq)
        with contextlib.suppress(RuntimeError):  # its loop has closed: nobody waits any more
            self.loop.call_soon_threadsafe(self.event.set)


class EventListener:
    def __init__(self, url: str) -> None:
        self._url = url
        self._waiters: dict[str, set[Waiter]] = {}
        self._lock = threading.Lock()
        self.listening = threading.Event()
        """Set while the LISTEN connection is up."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="loopwright-listen", daemon=True)
        self._thread.start()

    @contextlib.contextmanager
    def watch(self, run_id: str) -> Iterator[Waiter]:
        """A Waiter woken when the run (may have) got new events."""
        waiter = Waiter()
        with self._lock:
            self._waiters.setdefault(run_id, set()).add(waiter)
        try:
            yield waiter
        finally:
            with self._lock:
                waiters = self._waiters.get(run_id)
                if waiters is not None:
                    waiters.discard(waiter)
                    if not waiters:
                        del self._waiters[run_id]

    def _wake(self, run_id: str | None, seq: int = 0) -> None:
        with self._lock:
            if run_id is None:
                waiters = [w for group in self._waiters.values() for w in group]
            else:
                waiters = list(self._waiters.get(run_id, ()))
        for waiter in waiters:
            waiter.wake(seq)

    def _run(self) -> None:
        import psycopg

        failures = 0
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    failures = 0
                    self._wake(None)  # whatever was committed while we were away
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5):
                            seq, _, run_id = note.payload.partition(":")
                            if run_id:
                                self._wake(run_id, int(seq) if seq.isdigit() else 0)
                            else:
                                self._wake(None)
            except psycopg.Error:
                pass  # the server is away: waiters poll until it is back
            finally:
                self.listening.clear()
            self._stop.wait(RECONNECT_S[min(failures, len(RECONNECT_S) - 1)])
            failures += 1

    def close(self) -> None:
        self._stop.set()
        self._wake(None)
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
