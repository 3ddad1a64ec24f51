"""A subscriber in its own process: tails a run from a store and prints each event's seq and
the time it arrived (time.time()), one per line, until run_finished (or `--stop-after`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from loopwright.store import open_store
from loopwright.store._tail import tail_events


async def follow(location: str, run_id: str, after: int, stop_after: int | None) -> None:
    store = open_store(location)
    print("ready", flush=True)
    async for event in tail_events(store, run_id, after=after):
        print(event.seq, repr(time.time()), flush=True)
        if stop_after is not None and event.seq >= stop_after:
            break
    store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("location")
    parser.add_argument("run_id")
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--stop-after", type=int, default=None)
    args = parser.parse_args()
    asyncio.run(follow(args.location, args.run_id, args.after, args.stop_after))
    sys.exit(0)
