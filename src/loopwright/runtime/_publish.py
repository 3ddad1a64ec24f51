"""Storing an event built outside an EventLog (a run driven by hand), with its run's lease."""

from __future__ import annotations

from loopwright.errors import StoreError
from loopwright.events import Event, RunFinishedEvent, RunStartedEvent
from loopwright.runtime._embedded import EmbeddedEngine


async def publish_event(embedded: EmbeddedEngine, event: Event) -> None:
    """`Runtime.publish`: the run's lease taken at its `run_started` (let go again if the
    store refuses it) and released at its `run_finished`."""
    leases, writer = embedded.leases, embedded.writer
    started = isinstance(event, RunStartedEvent) and event.run_id not in leases.held
    if started:
        leases.hold(event.run_id)
    writer.write(event)
    try:
        await writer.flush()
    except StoreError:
        if started:
            leases.release(event.run_id)
        raise
    if isinstance(event, RunFinishedEvent):
        leases.release(event.run_id)
