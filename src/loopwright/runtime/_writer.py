"""StoreWriter: appends every run's events to the store from one thread, in batches.

The event loop never waits for the disk: `write` queues an event and returns. The writer
thread takes everything queued, appends it in one transaction per batch (`append_many`),
and only then hands the batch back to the event loop (`on_stored`, with the lines it
stored), where subscribers see it: no subscriber sees an event before it is stored. Each
event is encoded once, as it is queued: the line stored is the line a `--json` view
prints. `flush` is the durability barrier the
effects use before a tool that is not idempotent runs.

A store error is kept and raised from the next `flush` (the run then ends as failed, and
its lease lapses, so it shows as interrupted and can be resumed).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence

from loopwright.errors import StoreError
from loopwright.events import Event, encode_event
from loopwright.store import RunStore

MAX_BATCH = 512


class StoreWriter:
    """One writer thread for one store; shared by every run of a Runtime."""

    def __init__(
        self,
        store: RunStore,
        on_stored: Callable[[Sequence[Event], Sequence[str]], None] | None = None,
    ) -> None:
        self.store = store
        self.on_stored = on_stored
        self._queue: list[Event] = []
        self._lines: list[str] = []
        """Each queued event's line, made in the caller's thread as it is queued: what is
        stored, and what `on_stored` hands on with the event."""
        self._written = 0
        """How many events (in queue order) are durable."""
        self._queued = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._worker: threading.Thread | None = None
        self._closed = False
        self._wake_due = False
        """A wake-up of the thread is scheduled for the end of the event loop's turn."""
        self._go = False
        """The thread may take the queue: the turn ended, someone flushes, the batch is
        full or the writer closes. Without it, a thread that had just stored a batch took
        the next turn's events while they were still being written (one turn, two
        transactions: seen on a loaded machine)."""

    def write(self, event: Event) -> None:
        """Queue one event. The thread is woken once the event loop's turn ends, so the
        events of one turn are one transaction (woken per event, it stored most events one
        transaction each)."""
        line = encode_event(event)
        with self._cond:
            if self._worker is None:
                self._start()
            self._queue.append(event)
            self._lines.append(line)
            self._queued += 1
            if len(self._queue) == MAX_BATCH:  # a run that does not yield: store as it goes
                self._go = True
                self._cond.notify()  # once: the thread takes all that is queued by then
            if self._wake_due:
                return
            self._wake_due = True
        assert self._loop is not None
        self._loop.call_soon(self._wake)

    def _wake(self) -> None:
        with self._cond:
            self._wake_due = False
            self._go = bool(self._queue)  # (a full batch may have taken it already)
            self._cond.notify()

    async def flush(self) -> None:
        """Return once every event written so far is stored; StoreError if storing failed."""
        loop = asyncio.get_running_loop()
        with self._cond:
            target = self._queued
            if self._written >= target:
                self._raise_error()
                return
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append((target, future))
            self._go = bool(self._queue)  # (or the thread is storing the last of it)
            self._cond.notify()  # now, not at the end of the turn: someone waits
        await future

    def _raise_error(self) -> None:
        if self._error is not None:
            error = self._error
            raise StoreError(f"the run store failed: {error}") from error

    def _start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._worker = threading.Thread(target=self._run, name="loopwright-writer", daemon=True)
        self._worker.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not (self._go and self._queue) and not self._closed:
                    self._cond.wait()
                if not self._queue and self._closed:
                    return
                self._go = False
                queued, self._queue = self._queue, []
                lines, self._lines = self._lines, []
            for start in range(0, len(queued), MAX_BATCH):  # all taken at once: no re-slicing
                end = start + MAX_BATCH  # of what is left, a copy of the queue per batch
                self._store(queued[start:end], lines[start:end])

    def _store(self, batch: list[Event], lines: list[str]) -> None:
        try:
            self.store.append_many(batch, lines)
        except Exception as exc:  # kept for flush(): the run decides what it means
            self._error = exc
        with self._cond:
            self._written += len(batch)
            written = self._written
            ready = [f for target, f in self._waiters if target <= written]
            self._waiters = [(t, f) for t, f in self._waiters if t > written]
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(self._stored, batch, lines, ready)

    def _stored(
        self, batch: list[Event], lines: list[str], ready: list[asyncio.Future[None]]
    ) -> None:
        if self.on_stored is not None and self._error is None:
            self.on_stored(batch, lines)
        for future in ready:
            if future.done():
                continue
            if self._error is not None:
                future.set_exception(StoreError(f"the run store failed: {self._error}"))
            else:
                future.set_result(None)

    def close(self) -> None:
        """Store what is queued, then stop the thread (waits for it)."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            thread = self._worker
        if thread is not None and thread is not threading.current_thread():
            thread.join()
