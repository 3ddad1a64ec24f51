"""The store writer: the events of one event-loop turn are one transaction, a run that
never yields is still stored as it goes, and each event is encoded once for the store
and the `--json` view."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

from loopwright.events import Event, IterationStartedEvent, RunStartedEvent, encode_event
from loopwright.runtime._writer import MAX_BATCH, StoreWriter
from loopwright.store import SqliteRunStore


class SignallingStore(SqliteRunStore):
    """A real SQLite store that also says, from the writer's thread, what it stored."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.batches: list[int] = []
        self.stored = threading.Event()

    def append_many(self, events: Sequence[Event], lines: Sequence[str] | None = None) -> None:
        super().append_many(events, lines)
        self.batches.append(len(events))
        self.stored.set()


def run_events(run_id: str, count: int) -> list[Event]:
    started = RunStartedEvent(
        run_id=run_id, seq=1, ts=1.0, request="r", tenant="default", kind="agent",
        model="m", tools=[], options={},
    )  # fmt: skip
    steps: list[Event] = [
        IterationStartedEvent(
            run_id=run_id, seq=seq, ts=float(seq), iteration_number=seq, max_iterations=10**6
        )
        for seq in range(2, count + 1)
    ]
    return [started, *steps]


def test_the_events_of_one_turn_are_stored_in_one_transaction(tmp_path: Path) -> None:
    store = SignallingStore(tmp_path / "runs.db")
    events = run_events("run_a", 40)
    handed_back: list[int] = []

    async def main() -> None:
        writer = StoreWriter(store, on_stored=lambda batch, _: handed_back.append(len(batch)))
        writer.write(events[0])
        await writer.flush()  # run_started is durable before the run's first effect
        for event in events[1:]:  # one turn: nothing awaited in between
            writer.write(event)
        await writer.flush()
        writer.close()

    asyncio.run(main())
    assert store.batches == [1, 39] and handed_back == [1, 39]
    stored = store.events("run_a")
    assert [encode_event(e) for e in stored] == [encode_event(e) for e in events]


def test_a_run_that_never_yields_is_stored_while_it_runs(tmp_path: Path) -> None:
    store = SignallingStore(tmp_path / "runs.db")
    events = run_events("run_b", MAX_BATCH + 5)

    async def main() -> bool:
        writer = StoreWriter(store)
        writer.write(events[0])
        await writer.flush()
        store.stored.clear()
        for event in events[1:]:
            writer.write(event)
        # still in the same turn: the writer was woken by the full batch, not the turn's end
        seen = store.stored.wait(timeout=30)
        await writer.flush()
        writer.close()
        return seen

    assert asyncio.run(main()) is True
    assert store.batches[0] == 1 and store.batches[1] == MAX_BATCH
    assert sum(store.batches) == len(events)
    assert [e.seq for e in store.events("run_b")] == list(range(1, len(events) + 1))
