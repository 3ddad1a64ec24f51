"""Follow a run's events: live from this process's runtime, or from the store while another
process (say a `loopwright run` sharing the store file) executes the run and appends them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator

from loopwright.events import Event, RunFinishedEvent
from loopwright.runtime import Runtime


def held_elsewhere(runtime: Runtime, run_id: str) -> bool:
    """True while another process executes the run (it holds an unexpired lease on it)."""
    lease = runtime.store.lease(run_id)
    return (
        lease is not None and lease.owner != runtime.leases.owner and lease.expires_at > time.time()
    )


async def follow_run(
    runtime: Runtime, run_id: str, *, after: int = 0, poll_s: float = 0.5
) -> AsyncGenerator[Event, None]:
    """Events of `run_id` with seq > after, each once, in order, until the run ends.

    A run executed here is followed through `Runtime.subscribe`. One executed by another
    process is read from the store as soon as it appends (the store's live tail,
    `wait_for_events`), with the lease checked at least every `poll_s` seconds, for as long
    as that process holds its lease. The lease is checked before each read, and a process
    appends its last event before it lets the lease go, so the read after the lease is gone
    gets every event.
    """
    last = after
    while True:
        elsewhere = held_elsewhere(runtime, run_id)
        async with contextlib.aclosing(runtime.subscribe(run_id, after=last)) as events:
            async for event in events:
                yield event
                last = event.seq
                if isinstance(event, RunFinishedEvent):
                    return
        handle = runtime.handles.get(run_id)
        if handle is not None and not handle.done:
            continue  # resumed here in the meantime: subscribe to it live
        if not elsewhere:
            return
        await runtime.store.wait_for_events(run_id, after=last, timeout=poll_s)
