"""Store on vs off at a zero-latency model: what keeping the run log costs a step.

    python bench/store_on_off.py            # a markdown table; --json for machine-readable

The overhead scenario (a zero-latency `ScriptedModel` calling a trivial tool N-1 times),
through a `Runtime` as the CLI and the server run it, with the same events built, scrubbed
and handed on in both: "off" keeps them in an `InMemoryRunStore`, "on" in a SQLite file
(WAL, on disk; the writer thread's CPU counts: process time). A run that builds no events
at all (`AgentExecutor.run` with no listener) is shown for reference. Samples of the three
are interleaved; medians of CPU µs per step.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time
from itertools import count
from pathlib import Path
from typing import Any

from loopwright.store import RunStore, SqliteRunStore
from loopwright.testing import InMemoryRunStore
from store import agent_run, stored_run  # bench/store.py: the same runs as its loop rows

SIZES = (20, 100, 500)


def cpu_us_per_step(steps: int, store: RunStore | None) -> float:
    import asyncio

    gc.collect()
    started = time.process_time()
    asyncio.run(agent_run(steps, None) if store is None else stored_run(steps, store))
    cpu = time.process_time() - started
    if store is not None:
        store.close()
    return cpu / steps * 1e6


def measure(repeats: int, folder: Path) -> list[dict[str, Any]]:
    numbers = count()
    rows = []
    for steps in SIZES:
        samples: dict[str, list[float]] = {"none": [], "off": [], "on": []}
        for _ in range(max(5, repeats * 100 // steps)):
            samples["none"].append(cpu_us_per_step(steps, None))
            samples["off"].append(cpu_us_per_step(steps, InMemoryRunStore()))
            sqlite = SqliteRunStore(folder / f"runs{next(numbers)}.db")
            samples["on"].append(cpu_us_per_step(steps, sqlite))
        median = {name: statistics.median(values) for name, values in samples.items()}
        rows.append({"steps": steps, **median, "ratio": median["on"] / median["off"]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loopwright-bench-onoff-") as name:
        rows = measure(args.repeats, Path(name))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| N | no events, µs/step | store off (in memory) | store on (SQLite) | on / off |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['steps']} | {r['none']:.1f} | {r['off']:.1f} | {r['on']:.1f} "
            f"| {r['ratio']:.2f}x |"
        )
    print("\ngoal: on / off <= 1.5x")


if __name__ == "__main__":
    main()
