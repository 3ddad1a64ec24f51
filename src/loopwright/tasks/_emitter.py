"""One run's event emitter: numbers events gap-free, sends them to the sink, folds the state."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from loopwright.clock import Clock
from loopwright.events import Event, StreamChunk
from loopwright.tasks._models import TaskRunState
from loopwright.tasks._state import StateFileExporter, apply_event

EventSink = Callable[[Event], Awaitable[None]]


async def discard(event: Event) -> None:
    return None


class Emitter:
    """Every event of a task run goes out through `emit`: sink first, then the state."""

    def __init__(
        self,
        run_id: str,
        sink: EventSink,
        clock: Clock,
        exporter: StateFileExporter | None = None,
    ) -> None:
        self.run_id = run_id
        self.sink = sink
        self.clock = clock
        self.exporter = exporter
        self.seq = 0
        self.state = TaskRunState(task_id=run_id)
        self._started: dict[str, tuple[str, float]] = {}

    async def emit(self, event_type: type[Any], **fields: Any) -> Event:
        self.seq += 1
        event: Event = event_type(run_id=self.run_id, seq=self.seq, ts=self.clock.time(), **fields)
        await self.sink(event)
        apply_event(self.state, event, self._started)
        if self.exporter is not None and not isinstance(event, StreamChunk):
            self.exporter.save(self.state)
        return event
