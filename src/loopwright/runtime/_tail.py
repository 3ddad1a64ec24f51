"""Following a run: the one reader behind `Runtime.follow`, whichever engine and process
executes the run.

A follower reads the run's stored events after the last `seq` it saw, and the events of
the runs of its family (`family_link`: today its sub-agents' runs) nested where they
happen, until the run's `run_finished`, or until the run is no longer live and the store
holds nothing newer. Between reads it waits: for the store (`RunStore.wait_for_events`:
another process or a Temporal worker appends), or, while this process's writer stores the
run's events, for its `Wakeups` (a faster wake-up: the writer says which runs it has just
stored; the follower still reads them from the store). Token deltas, which are never
stored, come only from this process's `Wakeups`, each after the event it follows.

Each event comes with its JSON line where one is at hand (`Followed`): for the events this
process's writer stored, the very line it stored (encoded once, as the event was
appended), so a `--json` view prints what the store holds without encoding it again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from loopwright.events import (
    Event,
    ModelTextDeltaEvent,
    RunFinishedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
)
from loopwright.store import RunStore

TAIL_WAIT_S = 1.0
"""The longest a follower waits for a wake-up before it reads again."""


class Followed(NamedTuple):
    """An event as a follower hands it on, with its JSON line (`encode_event`'s) when one
    is at hand: the line this process's writer stored. None for an event read back from
    the store, or a token delta (never stored)."""

    event: Event
    line: str | None


@dataclass(frozen=True)
class Joins:
    """The run `child` joins the family here: its events are shown with its parent's from
    this event on, until the parent's event that `Leaves` the same `link`."""

    link: str
    child: str


@dataclass(frozen=True)
class Leaves:
    """The run joined under `link` leaves the family here (what it stored before is read
    first)."""

    link: str


def family_link(event: Event) -> Joins | Leaves | None:
    """How `event` changes the family of its run: the one place that says which runs a
    follower of a run reads with it. A sub-agent's run (or a task's agent step) joins at
    the `tool_call_started` that names it and leaves at that call's `tool_call`."""
    if isinstance(event, ToolCallStartedEvent) and event.child_run_id:
        return Joins(f"call:{event.call_id}", event.child_run_id)
    if isinstance(event, ToolCallEvent):
        return Leaves(f"call:{event.call_id}")
    return None


class RunFamily:
    """The stored events of a run and of the runs that joined its family, in the order a
    reader of the run expects them."""

    def __init__(self, store: RunStore, run_id: str, after: int) -> None:
        self.store = store
        self.run_id = run_id
        self.last: dict[str, int] = {run_id: after}
        """The runs read now (the run and its joined runs), and the last seq read of each."""
        self.joined: dict[tuple[str, str], str] = {}
        """(run, link) -> the run that joined under it, until it leaves."""

    @property
    def newest(self) -> str:
        """The run a reader waits on: the latest joined run, else the run itself."""
        return next(reversed(self.last))

    async def read(self, source: Source | None = None) -> list[Followed]:
        """What the family stored since the last read, in order (through `source`: a
        run's stored events after a seq; by default the store's)."""
        found: list[Followed] = []
        await self._read(self.run_id, found, source or self._stored)
        return found

    async def _stored(self, run_id: str, after: int) -> list[Followed]:
        return read_back(await asyncio.to_thread(self.store.events, run_id, after=after))

    async def _read(self, run_id: str, found: list[Followed], source: Source) -> None:
        for followed in await source(run_id, self.last[run_id]):
            event = followed.event
            link = family_link(event)
            if isinstance(link, Leaves) and (run_id, link.link) in self.joined:
                child = self.joined.pop((run_id, link.link))
                await self._read(child, found, source)  # what it stored before it left
                self.last.pop(child, None)
            found.append(followed)
            self.last[run_id] = event.seq
            if isinstance(link, Joins):
                self.joined[(run_id, link.link)] = link.child
                self.last[link.child] = 0
        for (parent, _), child in list(self.joined.items()):
            if parent == run_id and child in self.last:
                await self._read(child, found, source)


Source = Callable[[str, int], Awaitable[list[Followed]]]
"""A run's stored events after a seq, in order."""


def read_back(events: list[Event]) -> list[Followed]:
    """Events read from the store (their lines were made by whoever stored them)."""
    return [Followed(event, None) for event in events]


class Watch:
    """One follower's wake-ups from this process (`Wakeups.watch`): set when the writer
    stored events of a run it reads, or such a run's task ended; the token deltas of
    those runs, kept until the follower has read the event each follows.

    It also keeps the batches the writer stored of those runs since it watched them, so a
    read of a run executing here needs no round trip to the store (`events`): they are
    the rows just committed, and they are used only when they follow the seq read last
    without a gap, from a run watched since before the last read of the store (so none
    was stored unseen); otherwise the store is read."""

    def __init__(self, hub: Wakeups, store: RunStore) -> None:
        self.hub = hub
        self.store = store
        self.runs: frozenset[str] = frozenset()
        self.woken = asyncio.Event()
        self.deltas: list[ModelTextDeltaEvent] = []
        self.held: dict[str, list[Followed]] = {}
        """Run -> what the writer stored of it since it was watched (not yet read), with
        the lines it stored."""
        self.covered: set[str] = set()
        """The runs whose every stored event is in `held` or was read: watched since
        before a read of the store, and executing here since."""

    def watch(self, runs: Collection[str]) -> None:
        """Be woken for these runs (the follower's family now)."""
        if len(runs) == len(self.runs) and all(run_id in self.runs for run_id in runs):
            return
        runs = frozenset(runs)
        if runs != self.runs:
            self.hub.move(self, self.runs, runs)
            for run_id in self.runs - runs:
                self.held.pop(run_id, None)
                self.covered.discard(run_id)
            for run_id in runs - self.runs:
                self.held[run_id] = []
            self.runs = runs

    def source(self, here: bool) -> Source:
        """How the follower reads: from the held batches where they suffice (a run that
        executes here), else from the store."""

        async def events(run_id: str, after: int) -> list[Followed]:
            held = [f for f in self.held.get(run_id, ()) if f.event.seq > after]
            if here and run_id in self.covered and _follows(held, after):
                self.held[run_id] = []
                return held
            if not here:
                self.covered.discard(run_id)
            found = await asyncio.to_thread(self.store.events, run_id, after=after)
            if run_id in self.held:  # keep what was stored after the read's rows
                last = found[-1].seq if found else after
                self.held[run_id] = [f for f in self.held[run_id] if f.event.seq > last]
                if here:
                    self.covered.add(run_id)
            return read_back(found)

        return events

    async def wait(self, timeout: float) -> None:
        if self.woken.is_set():
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.woken.wait()

    def deltas_after(self, event: Event) -> list[ModelTextDeltaEvent]:
        """The deltas that follow `event` (a stored event just read), in order."""
        if not self.deltas:
            return []
        due = [d for d in self.deltas if d.run_id == event.run_id and d.seq == event.seq]
        if due:
            self.deltas = [d for d in self.deltas if d not in due]
        return due

    def due_deltas(self, last: dict[str, int]) -> list[ModelTextDeltaEvent]:
        """The deltas that follow an event read before (in order); those that follow one
        not stored yet wait for it; those of a run no longer read are dropped."""
        if not self.deltas:
            return []
        due = [d for d in self.deltas if last.get(d.run_id, -1) == d.seq]
        self.deltas = [d for d in self.deltas if last.get(d.run_id, d.seq) < d.seq]
        return due

    def close(self) -> None:
        self.hub.move(self, self.runs, frozenset())
        self.runs = frozenset()


class Wakeups:
    """Wakes the followers of the runs this process's writer stores (in-process only)."""

    def __init__(self) -> None:
        self._watches: dict[str, set[Watch]] = {}

    def watch(self, store: RunStore) -> Watch:
        return Watch(self, store)

    def move(self, watch: Watch, before: frozenset[str], after: frozenset[str]) -> None:
        for run_id in before - after:
            watches = self._watches.get(run_id)
            if watches is not None:
                watches.discard(watch)
                if not watches:
                    del self._watches[run_id]
        for run_id in after - before:
            self._watches.setdefault(run_id, set()).add(watch)

    def watched(self, run_id: str) -> bool:
        """Does a follower in this process read the run now?"""
        return run_id in self._watches

    def stored(self, batch: Sequence[Event], lines: Sequence[str]) -> None:
        """The writer stored `batch` as `lines` (on the event loop): its runs' followers
        here get them."""
        for event, line in zip(batch, lines, strict=True):
            for watch in self._watches.get(event.run_id, ()):
                held = watch.held.get(event.run_id)
                if held is not None:
                    held.append(Followed(event, line))
                watch.woken.set()

    def wake(self, run_id: str) -> None:
        """Wake the followers of `run_id` (events stored, or its task ended)."""
        for watch in self._watches.get(run_id, ()):
            watch.woken.set()

    def delta(self, event: ModelTextDeltaEvent) -> None:
        for watch in self._watches.get(event.run_id, ()):
            watch.deltas.append(event)
            watch.woken.set()


async def tail_while(
    store: RunStore,
    run_id: str,
    *,
    after: int,
    live: Callable[[], Awaitable[bool]],
    poll_s: float = TAIL_WAIT_S,
    watch: Watch | None = None,
    here: Callable[[str], bool] | None = None,
) -> AsyncGenerator[Followed, None]:
    """A run's stored events after `after` and its family's (see the module), each once,
    in order, until `run_finished`, or until `live()` says nobody executes the run any
    more and the store holds nothing newer. `live` is asked before each read, and an
    executor stores its last event before it stops being live, so nothing is missed.

    `watch` (this process's wake-ups) is waited on while `here(run_id)` says this
    process's writer stores the run's events; otherwise the store is."""
    family = RunFamily(store, run_id, after)
    try:
        while True:
            still = await live()
            if watch is not None:
                watch.woken.clear()  # from now: a batch stored during the read wakes it
                watch.watch(family.last)
                for delta in watch.due_deltas(family.last):  # of events read before
                    yield Followed(delta, None)
            members = len(family.last)
            woken_here = watch is not None and here is not None and here(run_id)
            events = await family.read(watch.source(woken_here) if watch is not None else None)
            for followed in events:
                yield followed
                event = followed.event
                if event.run_id == run_id and isinstance(event, RunFinishedEvent):
                    return
                if watch is not None and watch.deltas:
                    for delta in watch.deltas_after(event):
                        yield Followed(delta, None)
            if events and (not woken_here or len(family.last) != members):
                continue  # (woken here: a batch stored since the read has set the wake-up)
            if not still:
                return
            if watch is not None and woken_here:
                await watch.wait(poll_s)
            else:
                newest = family.newest
                await store.wait_for_events(newest, after=family.last[newest], timeout=poll_s)
    finally:
        if watch is not None:
            watch.close()


def _follows(events: list[Followed], after: int) -> bool:
    """Do `events` follow seq `after` without a gap (or are there none)?"""
    expected = after + 1
    for followed in events:
        if followed.event.seq != expected:
            return False
        expected += 1
    return True


async def stored_liveness(store: RunStore, run_id: str) -> bool:
    """Whether the stored record says the run may still get events (queued for a worker,
    or running: its executor holds the lease): for a run whose engine this process was
    not given (reading needs no engine)."""
    record = await asyncio.to_thread(store.get_run, run_id)
    return record is not None and record.status in LIVE_STATUSES


LIVE_STATUSES = ("queued", "running")
"""A stored run in one of these may still get events (waiting for a worker, or leased)."""
