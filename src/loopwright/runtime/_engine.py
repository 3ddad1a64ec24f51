"""RunEngine: what executes a run. The Runtime owns every run's life and hands each
operation to the engine the run's record names (`RunRecord.engine`), so nobody guesses.

Two engines implement it: the embedded one (runtime/_embedded.py: this process's event
loop) and Temporal (engines/temporal/_engine.py: workflows on workers). A run started on an
engine is recorded with its name and stays with it: resumed, cancelled, approved and
followed through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal, Protocol

from loopwright.effects._log import EventSink
from loopwright.events import Event, RunFinishedEvent, ToolCallEvent, ToolCallStartedEvent
from loopwright.models import Model
from loopwright.runtime._handles import RunHandle
from loopwright.runtime._spec import RunSpec
from loopwright.store import RunRecord, RunStore

if TYPE_CHECKING:
    from loopwright.tasks import TaskSpec

LIVE_STATUSES = ("queued", "running")
"""A stored run in one of these may still get events (waiting for a worker, or leased)."""

Delivery = Literal["process", "store", "engine", "queued"]
"""Where a gate decision went: `process`, a gate waiting in this process took it; `store`,
left in the run store for the process that executes the run (it polls); `engine`, the run's
engine took it (a Temporal workflow's Update); `queued`, recorded, and taken by the run
when a worker of its engine polls again (none does now)."""

TAIL_WAIT_S = 1.0
"""The longest a follower waits for a store's wake-up before it looks again."""


class RunEngine(Protocol):
    """Start, resume, cancel, approve and follow the runs of one engine."""

    name: str
    """Recorded in each run's row (`RunRecord.engine`)."""
    handles: dict[str, RunHandle]
    """The runs this engine started or resumed from this process."""

    def start(
        self,
        spec: RunSpec,
        *,
        run_id: str,
        parent_run_id: str | None = None,
        secrets: Sequence[str] = (),
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """Start an agent run; its handle's result is its ExecutionResult."""
        ...

    def start_task(
        self,
        spec: TaskSpec,
        *,
        run_id: str,
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """Start a task run; its handle's result is its TaskRunState."""
        ...

    async def resume(
        self,
        record: RunRecord,
        *,
        secrets: Sequence[str] = (),
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """Go on with an interrupted run from its log; a UsageError says why not."""
        ...

    async def cancel(self, record: RunRecord) -> bool:
        """Cancel the run and wait (bounded) for its end to be stored; False if this
        engine executes no such run now."""
        ...

    async def approve(
        self, record: RunRecord, gate_id: str, approved: bool, decided_by: str, reason: str
    ) -> Delivery:
        """Deliver a decision on a gate the run's log shows waiting (and that does not wait
        in this process); a UsageError says why it cannot be taken."""
        ...

    def follow(
        self, run_id: str, *, after: int = 0, poll_s: float = TAIL_WAIT_S
    ) -> AsyncGenerator[Event, None]:
        """The run's events with seq > after, each once, in order, until it ends."""
        ...

    async def aclose(self) -> None:
        """Let go of what the engine holds (connections)."""
        ...


async def tail_while(
    store: RunStore,
    run_id: str,
    *,
    after: int,
    live: Callable[[], Awaitable[bool]],
    poll_s: float = TAIL_WAIT_S,
) -> AsyncGenerator[Event, None]:
    """A run's stored events after `after`, each once, as whoever executes it appends them
    (the store's live tail), until `run_finished`, or until `live()` says nobody executes it
    any more and the store holds nothing newer. `live` is asked before each read, and an
    executor stores its last event before it stops being live, so nothing is missed.

    While one of its tool calls runs a sub-agent (its `tool_call_started` names the child
    run), the child's events come too, after that event and before the call's end, as the
    embedded engine's subscription gives them."""
    family = RunFamily(store, run_id, after)
    while True:
        still = await live()
        events = await family.read()
        for event in events:
            yield event
            if event.run_id == run_id and isinstance(event, RunFinishedEvent):
                return
        if events:
            continue
        if not still:
            return
        await store.wait_for_events(family.newest, after=family.last[family.newest], timeout=poll_s)


class RunFamily:
    """The stored events of a run and of the sub-agent runs its open calls started, in the
    order a reader of the run expects them."""

    def __init__(self, store: RunStore, run_id: str, after: int) -> None:
        self.store = store
        self.run_id = run_id
        self.last: dict[str, int] = {run_id: after}
        """The runs read, and the last seq read of each (the run's open children)."""
        self.open: dict[tuple[str, str], str] = {}
        """(run, call id) -> the child run that call started, until the call ends."""

    @property
    def newest(self) -> str:
        """The run a reader waits on: the latest open child, else the run itself."""
        return next(reversed(self.last))

    async def read(self) -> list[Event]:
        found: list[Event] = []
        await self._read(self.run_id, found)
        return found

    async def _read(self, run_id: str, found: list[Event]) -> None:
        events = await asyncio.to_thread(self.store.events, run_id, after=self.last[run_id])
        for event in events:
            if isinstance(event, ToolCallEvent) and (run_id, event.call_id) in self.open:
                child = self.open.pop((run_id, event.call_id))
                await self._read(child, found)  # what it stored before the call ended
                self.last.pop(child, None)
            found.append(event)
            self.last[run_id] = event.seq
            if isinstance(event, ToolCallStartedEvent) and event.child_run_id:
                self.open[(run_id, event.call_id)] = event.child_run_id
                self.last[event.child_run_id] = 0
        for (parent, _), child in list(self.open.items()):
            if parent == run_id and child in self.last:
                await self._read(child, found)


async def tail_stored(
    store: RunStore, run_id: str, *, after: int = 0, poll_s: float = TAIL_WAIT_S
) -> AsyncGenerator[Event, None]:
    """A run's events from the store alone, for a run whose engine this process was not
    given: reading needs no engine. It goes on while the stored record says the run may
    still get events (queued for a worker, or running: its executor holds the lease)."""

    async def live() -> bool:
        record = await asyncio.to_thread(store.get_run, run_id)
        return record is not None and record.status in LIVE_STATUSES

    async for event in tail_while(store, run_id, after=after, live=live, poll_s=poll_s):
        yield event
