"""The store's live tail alone: a run's stored events after a seq, then each new one as
another process (or machine) appends it, until `run_finished`. Not a follower of runs
(that is `Runtime.follow`, which also reads a run's family and stops when its executor is
gone): the conformance suite and the store benchmark measure the store's wake-up with it.

A tail only ever reads rows with `seq > last` (the last one it yielded), so a subscriber
that falls behind, or reconnects with the last seq it saw, gets every event once, in order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from loopwright.events import Event, RunFinishedEvent
from loopwright.store._base import RunStore

WAKE_S = 1.0
"""The longest a tail waits before reading again without being woken (a safety net)."""


async def tail_events(
    store: RunStore, run_id: str, *, after: int = 0, idle_timeout: float | None = None
) -> AsyncIterator[Event]:
    """Events of `run_id` with seq > after, each once, in order, until `run_finished`
    (or until `idle_timeout` seconds pass without a new event, if given)."""
    last = after
    idle = 0.0
    while True:
        events = store.events(run_id, after=last)
        for event in events:
            yield event
            last = event.seq
            if isinstance(event, RunFinishedEvent):
                return
        if events:
            idle = 0.0
            continue
        if idle_timeout is not None and idle >= idle_timeout:
            return
        wait = WAKE_S if idle_timeout is None else min(WAKE_S, idle_timeout - idle)
        if not await store.wait_for_events(run_id, after=last, timeout=wait):
            idle += wait
