"""A process's death at a chosen event, in this process: deterministic fault injection.

`DyingRecorder` stands in for a Runtime's store writer (the one recorder every event of a run
goes through, `Runtime.writer`). Events are queued and stored at each `flush`, the
durability barrier the effects use (before a tool that is not idempotent, at the run's
end). When the run appends event number `die_at`, the process "dies" there: the recorder
raises `ProcessDeath`, which no `except Exception` in the loop takes, so nothing after that
point runs: the effect whose result event `die_at` records has happened, nothing later has.
What the store holds then is what a SIGKILL at that instant leaves: the events stored at
the last barrier (`lose_queue=True`: the writer's queue dies with the process) or every
event before `die_at` (`lose_queue=False`: the writer had just stored them). The run's
lease is let go, as a dead process's lapses, so the run shows as interrupted.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from loopwright.events import Event
from loopwright.runtime import Runtime
from loopwright.store import RunStore


class ProcessDeath(BaseException):
    """The process is gone (a BaseException: no `except Exception` of the loop takes it)."""


class DyingRecorder:
    def __init__(self, store: RunStore, run_id: str, die_at: int, *, lose_queue: bool) -> None:
        self.store = store
        self.run_id = run_id
        self.die_at = die_at
        self.lose_queue = lose_queue
        self.queue: list[Event] = []
        self.died_at: Event | None = None

    def write(self, event: Event) -> None:
        self._alive()
        if event.run_id == self.run_id and event.seq >= self.die_at:
            self.died_at = event
            if not self.lose_queue:
                self._store()
            self.queue.clear()
            raise ProcessDeath(f"died appending event {event.seq} ({event.type})")
        self.queue.append(event)

    async def flush(self) -> None:
        self._alive()
        self._store()

    def close(self) -> None:
        if self.died_at is None:
            self._store()

    def _alive(self) -> None:
        if self.died_at is not None:
            raise ProcessDeath("the process is gone")

    def _store(self) -> None:
        if self.queue:
            self.store.append_many(self.queue)
            self.queue.clear()


@contextmanager
def dying_runtime(
    store: RunStore, run_id: str, die_at: int, *, lose_queue: bool
) -> Iterator[tuple[Runtime, DyingRecorder]]:
    """A Runtime over `store` whose process dies when run `run_id` appends event `die_at`."""
    runtime = Runtime(store)
    recorder = DyingRecorder(store, run_id, die_at, lose_queue=lose_queue)
    runtime.embedded.writer = recorder  # type: ignore[assignment]
    try:
        yield runtime, recorder
    finally:
        runtime.close()
