"""Cost of the durable run log: per appended event, and per loop step with the store on/off.

1. Appending: the events of real agent runs appended one by one (one transaction each, as
   the runtime does) to a SQLite store in WAL mode on disk; µs per event.
2. The loop: the overhead scenario of bench/overhead.py (a zero-latency model calling a
   trivial tool N-1 times), with no store, then with every event going through
   `Runtime.publish` to a SqliteRunStore first; µs per step and the ratio (target < 2x).

Times are the process's CPU time (`time.process_time`, which counts SQLite's system calls
too), so other work on a shared machine does not count as store cost.

    python bench/store.py            # a markdown table; --json for machine-readable output
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from loopwright import AgentExecutor, AgentOptions, ModelResponse, ScriptedModel, ToolCall, tool
from loopwright.events import Event
from loopwright.runtime import Runtime
from loopwright.store import InMemoryRunStore, RunStore, SqliteRunStore

STEPS = (20, 100, 500)


@tool
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


def append_cost_us(store_factory: Callable[[], RunStore], events: list[Event], runs: int) -> float:
    """µs per event, appending `runs` copies of one run's events one at a time."""
    batches = [
        [dataclasses.replace(e, run_id=f"run_{n}") for e in events]  # type: ignore[type-var]
        for n in range(runs)
    ]
    store = store_factory()
    gc.collect()
    started = time.process_time()
    for batch in batches:
        for event in batch:
            store.append(event)
    elapsed = time.process_time() - started
    store.close()
    return elapsed / (len(events) * runs) * 1e6


def step_cost_us(steps: int, store: RunStore | None) -> float:
    runtime = Runtime(store) if store is not None else None
    gc.collect()
    started = time.process_time()
    asyncio.run(agent_run(steps, runtime.publish if runtime is not None else None))
    elapsed = time.process_time() - started
    if runtime is not None:
        runtime.leases.close()
    return elapsed / steps * 1e6


def measure(repeats: int, folder: Path) -> dict[str, Any]:
    events = recorded_events(50)
    counter = iter(range(10**6))

    def sqlite() -> RunStore:
        return SqliteRunStore(folder / f"append{next(counter)}.db")

    appends = {
        "sqlite_us": min(append_cost_us(sqlite, events, 20) for _ in range(repeats)),
        "memory_us": min(append_cost_us(InMemoryRunStore, events, 20) for _ in range(repeats)),
        "events": len(events) * 20,
        "mean_event_bytes": statistics.mean(len(json.dumps(_wire(e))) for e in events),
    }
    rows = []
    for steps in STEPS:
        reps = max(5, repeats * 40 // steps)
        off: list[float] = []
        on: list[float] = []
        for _ in range(reps):  # interleaved; the fastest of each (noise only adds time)
            off.append(step_cost_us(steps, None))
            on.append(step_cost_us(steps, SqliteRunStore(folder / f"loop{next(counter)}.db")))
        rows.append(
            {"steps": steps, "off_us": min(off), "on_us": min(on), "ratio": min(on) / min(off)}
        )
    return {"append": appends, "loop": rows}


def _wire(event: Event) -> dict[str, Any]:
    from loopwright.events import event_to_dict

    return event_to_dict(event)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loopwright-bench-store-") as folder:
        result = measure(args.repeats, Path(folder))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    append = result["append"]
    print("| store | µs per appended event |")
    print("| --- | ---: |")
    print(f"| SQLite (WAL, synchronous=NORMAL, on disk) | {append['sqlite_us']:.1f} |")
    print(f"| in memory | {append['memory_us']:.1f} |")
    print(
        f"\n{append['events']} events of agent runs, one transaction each; "
        f"mean event {append['mean_event_bytes']:.0f} bytes of JSON.\n"
    )
    print("| N steps | µs/step, no store | µs/step, SQLite store | added µs/step | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for row in result["loop"]:
        added = row["on_us"] - row["off_us"]
        print(
            f"| {row['steps']} | {row['off_us']:.1f} | {row['on_us']:.1f} | {added:.1f} "
            f"| {row['ratio']:.2f}x |"
        )
    worst = max(row["ratio"] for row in result["loop"])
    print(
        f"\nworst store-on/off ratio: {worst:.2f}x (target < 2x), with a model that answers "
        "in zero time; each step is 4 events."
    )


if __name__ == "__main__":
    main()
