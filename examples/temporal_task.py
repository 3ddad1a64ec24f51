"""A task run with a gate on a Temporal worker: the gate waits in the workflow, and the
approval is the workflow's Update `approve`.

    python examples/temporal_task.py --temporal HOST:7233 --store postgresql://...
    python examples/temporal_task.py --dev     # throwaway Temporal dev server and PostgreSQL

A worker runs in this process (in production: `loopwright worker` on other hosts). The
task is examples/tasks/rotate-keys.yaml on a copy of its workspace: it lists the stale
keys, waits at its gate (stored as `confirmation_required`, so `runs show` and the
dashboard see it pending), then rotates them once approved. The run is started and its gate
decided through a `Runtime` whose engine is a `TemporalEngine` (`runtime.approve`); from a
shell the approval is

    loopwright task approve RUN_ID --temporal HOST:7233 --store postgresql://...
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import uuid
from pathlib import Path

from temporal_run import dev_servers

from loopwright.engines.temporal import TemporalEngine, WorkerAllows, connect, run_worker
from loopwright.events import ConfirmationRequiredEvent, Event, RunFinishedEvent
from loopwright.runtime import Runtime
from loopwright.store import PersistentStore, open_store
from loopwright.tasks import TaskSpec

TASKS = Path(__file__).with_name("tasks")


async def waiting_gate(store: PersistentStore, run_id: str) -> ConfirmationRequiredEvent:
    """The run's gate, once the worker has stored it as waiting."""
    seen = 0
    while True:
        for event in await asyncio.to_thread(store.events, run_id, after=seen):
            if isinstance(event, ConfirmationRequiredEvent):
                return event
            seen = event.seq
        await store.wait_for_events(run_id, after=seen, timeout=1.0)


def show(event: Event) -> str:
    detail = getattr(event, "step", "") or ""
    if isinstance(event, ConfirmationRequiredEvent):
        detail = f"{event.step}: {event.message}"
    return f"  {event.seq:>2} {event.type} {detail}".rstrip()


async def main(address: str, store_url: str, workspace: Path) -> str:
    client = await connect(address)
    queue = f"example-{uuid.uuid4().hex[:6]}"
    stop = asyncio.Event()
    allows = WorkerAllows.of(tools=[str(TASKS)])  # the task files this worker may run
    worker = asyncio.create_task(
        run_worker(client, store_url, task_queue=queue, stop=stop, allows=allows)
    )
    spec = TaskSpec(
        task_file=str((TASKS / "rotate-keys.yaml").resolve()),
        inputs={"env": "staging", "as_of": "2025-06-01"},
        workspace=str(workspace),
        state_root=str(workspace / ".state"),
    )
    store = open_store(store_url)
    runtime = Runtime(store, engine=TemporalEngine(address, store, task_queue=queue))
    try:
        handle = runtime.start_task(spec)
        gate = await asyncio.wait_for(waiting_gate(store, handle.run_id), 60)
        print(f"run {handle.run_id} waits at gate {gate.request_id}: {gate.message}")
        await runtime.approve(handle.run_id, gate.request_id, True, "example")
        state = await asyncio.wait_for(handle.wait(), 60)  # its TaskRunState, from the store
        events = store.events(handle.run_id)
    finally:
        stop.set()
        await worker
        await runtime.aclose()
        store.close()
    finished = events[-1]
    steps = finished.steps if isinstance(finished, RunFinishedEvent) else 0
    print(f"run {handle.run_id}: {state.status} ({steps} steps)")
    for event in events:
        print(show(event))
    return state.status


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--temporal", help="Temporal frontend HOST:PORT")
    parser.add_argument("--store", help="postgresql://... (with the store's schema)")
    parser.add_argument("--dev", action="store_true", help="start throwaway servers")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder) / "workspace"
        shutil.copytree(TASKS / "workspace", workspace)  # the run rotates keys in a copy
        if args.dev:
            with dev_servers() as (address, url):
                status = asyncio.run(main(address, url, workspace))
        else:
            if not args.temporal or not args.store:
                parser.error("give --temporal and --store, or --dev")
            status = asyncio.run(main(args.temporal, args.store, workspace))
    raise SystemExit(0 if status == "completed" else 1)
