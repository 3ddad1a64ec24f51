"""A run in progress in this process, and who follows it.

`subscription` gives a subscriber the run's stored events after the `seq` it saw, then the
live ones as the store's writer hands them over (`fan_out`, once stored), with nothing
missed and nothing twice; `wake_subscribers` ends every subscription when the run's task
ends, with or without `run_finished`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loopwright.events import Event, ModelTextDeltaEvent, RunFinishedEvent, RunStartedEvent
from loopwright.store import RunStore


@dataclass
class RunHandle:
    """A run in progress in this process."""

    run_id: str
    task: asyncio.Task[Any]
    subscribers: list[asyncio.Queue[Event | None]] = field(default_factory=list)
    """Live subscribers' queues; `None` is put in each when the run's task ends."""

    async def wait(self) -> Any:
        return await self.task

    @property
    def done(self) -> bool:
        return self.task.done()


async def subscription(
    store: RunStore, handle: RunHandle | None, run_id: str, after: int
) -> AsyncGenerator[Event, None]:
    """Events of `run_id` with seq > after: stored ones, then live ones until it ends."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    live = handle is not None and not handle.done
    if handle is not None and live:
        handle.subscribers.append(queue)  # before reading the store: nothing missed
    try:
        last = after
        for event in await asyncio.to_thread(store.events, run_id, after=after):
            yield event
            last = event.seq
            if isinstance(event, RunFinishedEvent):
                return
        while live:
            item = await queue.get()
            if item is None:  # the run's task ended (even without run_finished)
                return
            if item.run_id != run_id:  # a sub-agent's event (its own run, its own seq)
                yield item
                continue
            if isinstance(item, ModelTextDeltaEvent):  # it has the seq of the event before
                if item.seq >= last:
                    yield item
                continue
            if item.seq <= last:
                continue
            yield item
            last = item.seq
            if isinstance(item, RunFinishedEvent):
                return
    finally:
        if handle is not None and queue in handle.subscribers:
            handle.subscribers.remove(queue)


def fan_out(
    handles: Mapping[str, RunHandle], batch: Sequence[Event], parents: dict[str, str]
) -> None:
    """A stored batch to the subscribers of its runs (on the event loop). The events of a
    sub-agent's run (one whose `run_started` names a parent) go to the subscribers of the
    run above it that executes here: a live view shows them nested under its call.
    `parents` (child run -> parent run) is kept up to date here."""
    for event in batch:
        if isinstance(event, RunStartedEvent) and event.parent_run_id:
            parents[event.run_id] = event.parent_run_id
        run_id: str | None = event.run_id
        handle = handles.get(event.run_id)
        while handle is None and run_id in parents:
            run_id = parents[run_id]
            handle = handles.get(run_id)
        if isinstance(event, RunFinishedEvent):
            parents.pop(event.run_id, None)
        if handle is not None:
            for queue in handle.subscribers:
                queue.put_nowait(event)


def wake_subscribers(handle: RunHandle) -> None:
    """The run's task is over: subscribers still waiting must not wait forever."""
    for queue in handle.subscribers:
        queue.put_nowait(None)
