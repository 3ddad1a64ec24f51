"""Where the CPU of many concurrent runs goes: loopwright against the floor.

    python bench/concurrent_runs.py             # the fit: µs a run + µs a step, GC's share
    python bench/concurrent_runs.py --profile   # + cProfile of 1,000 concurrent 5-step runs

Bursts of 1,000 concurrent runs of 1, 5 and 9 steps (the scenario of bench/peers: a scripted
zero-latency model calls an `add` tool, then answers), loopwright and the floor in turn in
this one process, medians of five bursts each. The per-run and per-step costs are the line
through the 1- and 9-step medians. The cyclic GC's share is the CPU time spent between its
start and stop callbacks.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent / "peers"))
sys.path.insert(0, str(Path(__file__).parent))

import peer_floor
import peer_loopwright

RUNS = 1000
STEPS = (1, 5, 9)
BURSTS = 5


class GcClock:
    """CPU time spent in the cyclic GC, and its collections per generation."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds += time.process_time() - self._started
            self.collections[info["generation"]] += 1


def burst(run_once: Any, steps: int) -> tuple[float, GcClock]:
    """CPU µs a run of `RUNS` concurrent runs of `steps` steps, and the GC's part of it."""

    async def many() -> None:
        await asyncio.gather(*(run_once(steps) for _ in range(RUNS)))

    gc.collect()
    clock = GcClock()
    gc.callbacks.append(clock)
    started = time.process_time()
    try:
        asyncio.run(many())
    finally:
        gc.callbacks.remove(clock)
    return (time.process_time() - started) / RUNS * 1e6, clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    frameworks = {"floor": peer_floor.run_once, "loopwright": peer_loopwright.run_once}
    samples: dict[tuple[str, int], list[float]] = {}
    gc_share: dict[str, list[float]] = {name: [] for name in frameworks}
    collections: dict[str, list[int]] = {}
    for _ in range(BURSTS):
        for name, run_once in frameworks.items():
            for steps in STEPS:
                us, clock = burst(run_once, steps)
                samples.setdefault((name, steps), []).append(us)
                if steps == 5:
                    gc_share[name].append(clock.seconds * 1e6 / RUNS / us)
                    collections[name] = clock.collections
    print(f"{RUNS:,} concurrent runs, medians of {BURSTS} bursts\n")
    print("| | µs a run, 1 / 5 / 9 steps | fit: µs a run + µs a step | runs per CPU-s (5 steps) "
          "| GC's share (5 steps) | collections per generation |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    rates = {}
    for name in frameworks:
        m = {steps: statistics.median(samples[(name, steps)]) for steps in STEPS}
        per_step = (m[9] - m[1]) / 8
        rates[name] = 1e6 / m[5]
        print(
            f"| {name} | {m[1]:.0f} / {m[5]:.0f} / {m[9]:.0f} | {m[1] - per_step:.0f} + "
            f"{per_step:.0f} | {rates[name]:,.0f} | {statistics.median(gc_share[name]):.0%} "
            f"| {collections[name]} |"
        )
    print(f"\nloopwright / floor, runs per CPU-s: {rates['loopwright'] / rates['floor']:.2f}")
    if args.profile:
        profile = cProfile.Profile()

        async def many() -> None:
            await asyncio.gather(*(peer_loopwright.run_once(5) for _ in range(RUNS)))

        profile.enable()
        asyncio.run(many())
        profile.disable()
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(30)
        print(text.getvalue())


if __name__ == "__main__":
    main()
