"""What a worker gives the runs it executes tools for, so a sub-agent (`agent.as_tool`)
works there as it does embedded.

A sub-agent's run executes inside its lead's tool activity, on the worker, with a context
derived from the lead's (agent/_subagent.py). From the worker it gets:

- a recorder: the child's events are appended to the run store as they are made (in
  order, each batch once: a retried append skips what is stored; a store outage is waited
  out as by every activity), so the store, `runs show` and the dashboard see a run of its
  own nested under the lead's call;
- the worker's leases: the child is listed `running` while it runs here, and another
  process may leave a decision for it;
- a gatekeeper that takes those decisions from the store (`runs approve CHILD_RUN_ID`, a
  server, a terminal following the lead): the lead's approval rule covers the child's
  tools, as on the embedded engine;
- the store, from which a retried call (the tool is idempotent) resumes the child from
  what an earlier attempt recorded instead of starting it again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass

from loopwright.engines.temporal._activity_support import retrying
from loopwright.errors import StoreError
from loopwright.events import Event, ModelTextDeltaEvent
from loopwright.run_context import Gatekeeper, RunContext
from loopwright.runtime._lease import LeaseKeeper
from loopwright.store import PersistentStore


class StoredAsMade:
    """A Recorder for the runs a worker executes inside activities (one per lead run):
    events are appended in the order written, by one task at a time; `flush` waits for
    what was written and raises the store's failure, if storing failed."""

    def __init__(self, store: PersistentStore) -> None:
        self.store = store
        self._queue: list[Event] = []
        self._draining: asyncio.Task[None] | None = None
        self._error: StoreError | None = None

    def write(self, event: Event) -> None:
        if isinstance(event, ModelTextDeltaEvent):  # live only, never stored
            return
        self._queue.append(event)
        if self._draining is None or self._draining.done():
            self._draining = asyncio.get_running_loop().create_task(self._drain())

    async def flush(self) -> None:
        while self._draining is not None and not self._draining.done():
            await asyncio.shield(self._draining)
        if self._error is not None:
            raise StoreError(f"the run store failed: {self._error}")

    async def _drain(self) -> None:
        while self._queue and self._error is None:
            batch, self._queue = self._queue, []
            try:
                await retrying(functools.partial(asyncio.to_thread, self._append, batch))
            except StoreError as exc:
                self._error = exc  # the runs writing here fail at their next flush

    def _append(self, batch: Sequence[Event]) -> None:
        """Append what the store does not hold yet (an attempt may have committed)."""
        stored: dict[str, int] = {}
        fresh: list[Event] = []
        for event in batch:
            if event.run_id not in stored:
                record = self.store.get_run(event.run_id)
                stored[event.run_id] = record.last_seq if record is not None else 0
            if event.seq > stored[event.run_id]:
                fresh.append(event)
        if fresh:
            self.store.append_many(fresh)


@dataclass(frozen=True)
class WorkerParts:
    """The parts of a worker every run's context gets (see the module's docstring)."""

    store: PersistentStore
    gates: Gatekeeper
    leases: LeaseKeeper

    def complete(self, context: RunContext) -> RunContext:
        """`context` (a run's, on this worker) with them, and a recorder of its own."""
        return dataclasses.replace(
            context, gates=self.gates, store=self.store, leases=self.leases,
            recorder=StoredAsMade(self.store),
        )  # fmt: skip
