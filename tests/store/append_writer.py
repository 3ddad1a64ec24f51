"""One writer in its own process: appends `count` events to a run, each at the next free
seq (read from the store), trying again when another writer took that seq first. Starts when
a line arrives on stdin; prints how many appends lost a race."""

from __future__ import annotations

import sys

from loopwright.errors import StoreError
from loopwright.events import IterationStartedEvent
from loopwright.store import open_store


def main(location: str, run_id: str, writer: int, count: int) -> None:
    store = open_store(location)
    print("ready", flush=True)
    sys.stdin.readline()
    lost = 0
    for k in range(count):
        while True:
            record = store.get_run(run_id)
            assert record is not None
            seq = record.last_seq + 1
            try:
                store.append(
                    IterationStartedEvent(
                        run_id=run_id,
                        seq=seq,
                        ts=float(seq),
                        iteration_number=writer * 1000 + k,
                        max_iterations=10,
                    )
                )
                break
            except StoreError:
                lost += 1
    store.close()
    print(lost, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
