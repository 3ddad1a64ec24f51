"""Cost of the durable run log, SQLite and PostgreSQL side by side.

1. Appending: the events of real agent runs appended one by one (one transaction each) to
   a SQLite store in WAL mode on disk, and to a Postgres store on a local server (started
   here: initdb in a temporary folder, loopback TCP); µs per event, as this process's CPU
   time and as wall time (Postgres does its part in the server's processes).
2. Throughput: 1, 4 and 8 writer processes, each appending its own run's events one at a
   time, all at once; events per second (wall time, all writers).
3. The live tail: a subscriber in another process (`tail_events`) and a writer appending an
   event every 10 ms; p50/p99 from the start of the append to the event reaching the
   subscriber (goal p99 < 50 ms).
4. The loop: the overhead scenario of bench/overhead.py (a zero-latency model calling a
   trivial tool N-1 times) with no store, a SQLite store and a Postgres store, through
   `Runtime` (every event stored before anyone sees it); µs per step and the ratio.

    python bench/store.py            # markdown tables; --json for machine-readable output
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from loopwright import AgentExecutor, AgentOptions, ModelResponse, ToolCall, tool
from loopwright.events import Event, IterationStartedEvent, RunStartedEvent
from loopwright.runtime import Runtime
from loopwright.store import RunStore, open_store
from loopwright.store._pg_local import LocalPostgres, find_pg_bin, start_local_postgres
from loopwright.store._tail import tail_events
from loopwright.testing import InMemoryRunStore, ScriptedModel

STEPS = (20, 100, 500)
WRITERS = (1, 4, 8)
PER_WRITER = 1000
TAIL_EVENTS = 300
TAIL_PACE_S = 0.01


@tool(effect="read")
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(steps: int) -> list[ModelResponse]:
    calls = [
        ModelResponse(tool_calls=(ToolCall(f"c{i}", "add", {"a": i, "b": 1}),))
        for i in range(steps - 1)
    ]
    return [*calls, ModelResponse(text="done")]


async def agent_run(steps: int, sink: Callable[[Event], Awaitable[None]] | None) -> None:
    model = ScriptedModel(script(steps), tool_mode="native")
    options = AgentOptions(max_iterations=steps + 1, no_progress_limit=steps + 1)
    result = await AgentExecutor(model, [add], options=options).run("count", on_event=sink)
    assert result.success and len(result.steps) == steps - 1, result


def recorded_events(steps: int) -> list[Event]:
    events: list[Event] = []

    async def keep(event: Event) -> None:
        events.append(event)

    asyncio.run(agent_run(steps, keep))
    return events


def append_cost(store: RunStore, events: list[Event], runs: int, tag: str) -> tuple[float, float]:
    """(CPU µs, wall µs) per event, appending `runs` copies of one run's events one at a time."""
    batches = [
        [dataclasses.replace(e, run_id=f"{tag}_{n}") for e in events]  # type: ignore[type-var]
        for n in range(runs)
    ]
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    for batch in batches:
        for event in batch:
            store.append(event)
    count = len(events) * runs
    return (
        (time.process_time() - cpu) / count * 1e6,
        (time.perf_counter() - wall) / count * 1e6,
    )


async def stored_run(steps: int, store: RunStore) -> None:
    """The run as the CLI and the server make it: through a Runtime, whose writer thread
    stores every event (the CPU of that thread counts: process time)."""
    model = ScriptedModel(script(steps), tool_mode="native")
    options = AgentOptions(max_iterations=steps + 1, no_progress_limit=steps + 1)
    runtime = Runtime(store)
    try:
        agent = AgentExecutor(model, [add], options=options)
        result = await runtime.start_agent(agent, "count").wait()
    finally:
        runtime.close()
    assert result.success and len(result.steps) == steps - 1, result


def step_cost(steps: int, store: RunStore | None) -> tuple[float, float]:
    """(CPU µs, wall µs) per step of an agent run, its events stored through a Runtime."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(agent_run(steps, None) if store is None else stored_run(steps, store))
    return ((time.process_time() - cpu) / steps * 1e6, (time.perf_counter() - wall) / steps * 1e6)


# --- worker processes ----------------------------------------------------------------------


def writer_process(location: str, run_id: str, count: int, pace_s: float) -> None:
    """Append `count` events to a new run, one transaction each, after a line on stdin;
    print the wall time each append started (with --pace, one every pace_s seconds)."""
    store = open_store(location)
    store.append(
        RunStartedEvent(
            run_id=run_id,
            seq=1,
            ts=time.time(),
            request="bench",
            kind="agent",
            model="m",
            tools=[],
            options={},
            tenant="default",
        )
    )
    print("ready", flush=True)
    sys.stdin.readline()
    starts = []
    for seq in range(2, count + 2):
        if pace_s:
            time.sleep(pace_s)  # a steady load, not a wait for anything
        starts.append(time.time())
        store.append(
            IterationStartedEvent(
                run_id=run_id, seq=seq, ts=starts[-1], iteration_number=1, max_iterations=10
            )
        )
    print(json.dumps({"starts": starts, "end": time.time()}), flush=True)
    store.close()


def subscriber_process(location: str, run_id: str, count: int) -> None:
    """Tail the run; print the wall time each of `count` events (after the first) arrived."""

    async def follow() -> list[float]:
        store = open_store(location)
        arrived = []
        print("ready", flush=True)
        async for event in tail_events(store, run_id, after=1):
            arrived.append(time.time())
            if event.seq >= count + 1:
                break
        store.close()
        return arrived

    print(json.dumps(asyncio.run(follow())), flush=True)


def spawn(*args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, __file__, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def throughput(location: str, writers: int, tag: str) -> float:
    """Events per second with `writers` processes appending at once."""
    procs = [
        spawn("--writer", location, f"{tag}_{w}", str(PER_WRITER), "0") for w in range(writers)
    ]
    began = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.stdout is not None
        proc.stdout.read()
        proc.wait()
    return writers * PER_WRITER / (time.perf_counter() - began)


def tail_latency(location: str, tag: str) -> dict[str, float]:
    """p50/p99 ms from the start of an append to the event reaching another process."""
    writer = spawn("--writer", location, tag, str(TAIL_EVENTS), str(TAIL_PACE_S))
    subscriber = spawn("--subscriber", location, tag, str(TAIL_EVENTS))
    assert writer.stdin is not None and writer.stdout is not None and subscriber.stdout is not None
    writer.stdin.write("go\n")
    writer.stdin.flush()
    starts = json.loads(writer.stdout.readline())["starts"]
    arrived = json.loads(subscriber.stdout.readline())
    writer.wait()
    subscriber.wait()
    latencies = sorted((b - a) * 1000 for a, b in zip(starts, arrived, strict=True))
    return {
        "p50_ms": statistics.median(latencies),
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1],
        "max_ms": latencies[-1],
    }


# --- the measurements ----------------------------------------------------------------------


def measure(repeats: int, folder: Path, server: LocalPostgres | None) -> dict[str, Any]:
    events = recorded_events(50)
    counter = iter(range(10**6))
    stores: dict[str, Callable[[], RunStore]] = {
        "sqlite": lambda: open_store(folder / f"s{next(counter)}.db"),
    }
    if server is not None:
        stores["postgres"] = lambda: open_store(
            server.create_database(f"b{next(counter)}"), migrate=True
        )
    result: dict[str, Any] = {"events_per_run": len(events), "append": {}, "throughput": {},
                              "tail": {}, "loop": []}  # fmt: skip
    for name, make in [*stores.items(), ("memory", InMemoryRunStore)]:
        samples = []
        for r in range(repeats):
            store = make()
            samples.append(append_cost(store, events, 10, f"a{r}"))
            store.close()
        result["append"][name] = {"cpu_us": min(s[0] for s in samples),
                                  "wall_us": min(s[1] for s in samples)}  # fmt: skip
    for name, make in stores.items():
        store = make()
        location = getattr(store, "_url", None) or str(store.path)
        store.close()
        result["throughput"][name] = {str(n): throughput(location, n, f"t{n}") for n in WRITERS}
        result["tail"][name] = tail_latency(location, "tail")
    for steps in STEPS:
        row: dict[str, Any] = {"steps": steps}
        for name, make in [("none", None), *stores.items()]:
            reps = max(3, repeats * 20 // steps)
            samples = [step_cost(steps, make() if make else None) for _ in range(reps)]
            row[name] = {
                "cpu_us": min(s[0] for s in samples),
                "wall_us": min(s[1] for s in samples),
            }
        result["loop"].append(row)
    return result


def report(result: dict[str, Any], fsync_us: float | None) -> None:
    append = result["append"]
    names = {"sqlite": "SQLite (WAL, synchronous=NORMAL, on disk)",
             "postgres": "Postgres (local server, loopback TCP, fsync off)",
             "memory": "in memory"}  # fmt: skip
    print("| store | CPU µs per event (this process) | wall µs per event |")
    print("| --- | ---: | ---: |")
    for name, row in append.items():
        print(f"| {names[name]} | {row['cpu_us']:.1f} | {row['wall_us']:.1f} |")
    if fsync_us is not None:
        print(f"| Postgres, fsync on (every commit synced) | | {fsync_us:.1f} |")
    print(f"\n{result['events_per_run']} events per run, one transaction per event.\n")
    print("| store | " + " | ".join(f"{n} writer(s), events/s" for n in WRITERS) + " |")
    print("| --- |" + " ---: |" * len(WRITERS))
    for name, row in result["throughput"].items():
        print(f"| {name} | " + " | ".join(f"{row[str(n)]:,.0f}" for n in WRITERS) + " |")
    print("\n| store | append → subscriber in another process, p50 | p99 | max |")
    print("| --- | ---: | ---: | ---: |")
    for name, row in result["tail"].items():
        print(
            f"| {name} | {row['p50_ms']:.1f} ms | {row['p99_ms']:.1f} ms | {row['max_ms']:.1f} ms |"
        )
    stores = [n for n in ("sqlite", "postgres") if n in result["append"]]
    print("\n| N steps | µs/step no store (CPU / wall) | " + " | ".join(
        f"{n}: CPU µs/step, ratio | {n}: wall µs/step, ratio" for n in stores) + " |")  # fmt: skip
    print("| ---: | ---: |" + " ---: | ---: |" * len(stores))
    for row in result["loop"]:
        base = row["none"]
        cells = [f"{base['cpu_us']:.1f} / {base['wall_us']:.1f}"]
        for name in stores:
            on = row[name]
            cells.append(f"{on['cpu_us']:.1f}, {on['cpu_us'] / base['cpu_us']:.2f}x")
            cells.append(f"{on['wall_us']:.1f}, {on['wall_us'] / base['wall_us']:.2f}x")
        print(f"| {row['steps']} | " + " | ".join(cells) + " |")


def fsync_append_us(events: list[Event]) -> float:
    server = start_local_postgres(settings={"fsync": "on"})
    try:
        store = open_store(server.create_database("fsync"), migrate=True)
        wall = append_cost(store, events, 3, "f")[1]
        store.close()
        return wall
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--writer", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--subscriber", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.writer:
        location, run_id, count, pace = args.writer
        return writer_process(location, run_id, int(count), float(pace))
    if args.subscriber:
        location, run_id, count = args.subscriber
        return subscriber_process(location, run_id, int(count))
    server = start_local_postgres() if find_pg_bin() else None
    try:
        with tempfile.TemporaryDirectory(prefix="loopwright-bench-store-") as folder:
            result = measure(args.repeats, Path(folder), server)
    finally:
        if server is not None:
            server.stop()
    fsync_us = fsync_append_us(recorded_events(50)) if server is not None else None
    if args.json:
        print(json.dumps({**result, "postgres_fsync_wall_us": fsync_us}, indent=2))
        return
    if server is None:
        print("(no PostgreSQL server binaries: `make postgres`; SQLite rows only)\n")
    report(result, fsync_us)


if __name__ == "__main__":
    main()
