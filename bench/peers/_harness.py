"""Shared measurement harness: each framework module gives `run_once(steps)`; this measures.

Run one framework per process:  python bench/peers/_harness.py MODULE
or several in one process, sample by sample in turn:  python bench/peers/_harness.py A B
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import inspect
import json
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

SIZES = (20, 100, 500)
REPEATS = {20: 41, 100: 15, 500: 5}
"""Samples per size: a 20-step run takes about a millisecond here, so 7 samples left its
median at the mercy of one noisy neighbour; the longer runs average over more steps."""
CONCURRENT_RUNS = 1000
CONCURRENT_STEPS = 5

RunOnce = Callable[[int], Awaitable[None]] | Callable[[int], None]


async def _call(run_once: RunOnce, steps: int) -> None:
    if inspect.iscoroutinefunction(run_once):
        await run_once(steps)
    else:
        await asyncio.to_thread(run_once, steps)


def sample_us(run_once: RunOnce, steps: int) -> float:
    """CPU µs a step of one run, started the way its framework is used: async frameworks
    in a fresh event loop (`asyncio.run`), sync ones (smolagents) directly. CPU time of
    this process (all its threads): other processes on a shared machine taking the CPU do
    not count."""
    gc.collect()
    started = time.process_time()
    if inspect.iscoroutinefunction(run_once):
        asyncio.run(run_once(steps))
    else:
        run_once(steps)
    return (time.process_time() - started) / steps * 1e6


def per_step_us(run_once: RunOnce, steps: int, repeats: int) -> float:
    """Median over `repeats` runs."""
    return statistics.median(sample_us(run_once, steps) for _ in range(repeats))


def concurrent_runs_per_s(run_once: RunOnce) -> float:
    """1,000 concurrent 5-step runs: runs per second of this process's CPU time."""

    async def many() -> None:
        await asyncio.gather(*(_call(run_once, CONCURRENT_STEPS) for _ in range(CONCURRENT_RUNS)))

    started = time.process_time()
    asyncio.run(many())
    return CONCURRENT_RUNS / (time.process_time() - started)


def measure(module_name: str, budget_s: float) -> dict[str, Any]:
    started = time.perf_counter()
    module = importlib.import_module(module_name)
    import_s = time.perf_counter() - started
    run_once: RunOnce = module.run_once
    result: dict[str, Any] = {"framework": module.NAME, "import_s": import_s, "per_step_us": {}}
    for steps in SIZES:
        repeats = REPEATS[steps]
        result["per_step_us"][str(steps)] = per_step_us(run_once, steps, repeats)
        if time.perf_counter() - started > budget_s:
            break
    result["runs_per_s_1000_concurrent"] = concurrent_runs_per_s(run_once)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def measure_interleaved(module_names: list[str]) -> list[dict[str, Any]]:
    """Several frameworks in this one process, sample by sample in turn (a load that
    comes and goes on a shared machine weighs on each alike): medians of the per-step
    samples, and of three 1,000-run bursts each. Peak RSS is this process's, for all."""
    results, runners = [], []
    for name in module_names:
        started = time.perf_counter()
        module = importlib.import_module(name)
        import_s = time.perf_counter() - started
        results.append({"framework": module.NAME, "import_s": import_s, "per_step_us": {}})
        runners.append(module.run_once)
    for steps in SIZES:
        samples: list[list[float]] = [[] for _ in runners]
        for _ in range(REPEATS[steps]):
            for index, run_once in enumerate(runners):
                samples[index].append(sample_us(run_once, steps))
        for result, values in zip(results, samples, strict=True):
            result["per_step_us"][str(steps)] = statistics.median(values)
    bursts: list[list[float]] = [[] for _ in runners]
    for _ in range(3):
        for index, run_once in enumerate(runners):
            bursts[index].append(concurrent_runs_per_s(run_once))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for result, values in zip(results, bursts, strict=True):
        result["runs_per_s_1000_concurrent"] = statistics.median(values)
        result["peak_rss_mb"] = peak
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("modules", nargs="+", help="one, or several to interleave")
    parser.add_argument("--budget-s", type=float, default=300.0)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    if len(args.modules) == 1:
        print(json.dumps(measure(args.modules[0], args.budget_s)))
        return
    for result in measure_interleaved(args.modules):
        print(json.dumps(result))


if __name__ == "__main__":
    main()
