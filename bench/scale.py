"""Scale in one process: many concurrent runs against a model with simulated latency.

Every run makes 2 tool calls and then answers; every model call takes 50 ms (asyncio sleep:
the simulated network, not synchronisation). With unlimited parallelism a run takes 150 ms,
so the latency-bound ideal is RUNS / 0.15 s. One Python process uses one core, though, so
the real ceiling is the engine's CPU time per run: measured here too (the same runs one
after another with a zero-latency model), with the share of the cyclic garbage collector
(the same burst again with the collector paused). Memory per in-flight run is the peak of
traced allocations while all runs are in flight, divided by the runs.

    python bench/scale.py [--runs 10000] [--latency 0.05] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import tracemalloc
from dataclasses import dataclass
from typing import Literal

from loopwright import AgentExecutor, ModelRequest, ModelResponse, ToolCall, tool

STEPS = 3


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class SlowScriptedModel:
    """Answers like a remote model: after `latency` seconds."""

    name = "simulated"
    preferred_tool_mode: Literal["native", "prompted"] = "native"

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(self.latency)
        self.calls += 1
        if self.calls < STEPS:
            call = ToolCall(f"c{self.calls}", "add", {"a": self.calls, "b": 1})
            return ModelResponse(tool_calls=(call,))
        return ModelResponse(text="done")


async def one_run(latency: float) -> bool:
    result = await AgentExecutor(SlowScriptedModel(latency), [add]).run("count")
    return result.success


@dataclass
class Burst:
    wall_s: float
    cpu_s: float
    succeeded: int


async def burst(runs: int, latency: float, *, collect: bool = True) -> Burst:
    """`runs` concurrent runs; `collect=False` pauses the cyclic GC meanwhile."""
    gc.collect()
    if not collect:
        gc.disable()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        outcomes = await asyncio.gather(*(one_run(latency) for _ in range(runs)))
        return Burst(time.perf_counter() - wall, time.process_time() - cpu, sum(outcomes))
    finally:
        gc.enable()


async def cpu_per_run_s(batch: int = 500, batches: int = 7) -> float:
    """Engine CPU time per run: the same runs one after another, zero model latency."""
    for _ in range(batch // 5):
        await one_run(0.0)
    samples = []
    for _ in range(batches):
        gc.collect()
        started = time.process_time()
        for _ in range(batch):
            await one_run(0.0)
        samples.append((time.process_time() - started) / batch)
    return statistics.median(samples)


async def memory_per_run(runs: int, latency: float) -> float:
    """Peak traced bytes per in-flight run (traced separately: tracing slows everything)."""
    gc.collect()
    tracemalloc.start()
    await asyncio.gather(*(one_run(latency) for _ in range(runs)))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / runs


def median_burst(runs: int, latency: float, repeats: int, *, collect: bool = True) -> Burst:
    bursts = [asyncio.run(burst(runs, latency, collect=collect)) for _ in range(repeats)]
    assert all(b.succeeded == runs for b in bursts), "some runs did not succeed"
    return Burst(
        statistics.median(b.wall_s for b in bursts),
        statistics.median(b.cpu_s for b in bursts),
        runs,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs = args.runs
    cpu = asyncio.run(cpu_per_run_s())
    normal = median_burst(runs, args.latency, args.repeats)
    paused = median_burst(runs, args.latency, args.repeats, collect=False)
    per_run = asyncio.run(memory_per_run(max(1, runs // 10), args.latency))
    latency_bound = runs / (STEPS * args.latency)
    print(
        "| runs | model latency | wall s | runs/s | latency-bound ideal | CPU s "
        "| runs per CPU-s | engine CPU bound (1 core) | of it | KB/run |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    per_cpu_s = runs / normal.cpu_s
    print(
        f"| {runs:,} | {args.latency * 1000:.0f} ms | {normal.wall_s:.2f} "
        f"| {runs / normal.wall_s:,.0f} | {latency_bound:,.0f} | {normal.cpu_s:.2f} "
        f"| {per_cpu_s:,.0f} | {1 / cpu:,.0f} | {per_cpu_s * cpu:.0%} | {per_run / 1024:.1f} |"
    )
    print(
        f"\nEngine CPU per run, runs one after another (3 model calls, 2 tool calls, 12 "
        f"events): {cpu * 1e6:.0f} µs. Bursts: medians of {args.repeats}. Wall time counts "
        "other processes on a shared machine; CPU time does not."
    )
    print(
        f"Same bursts with the cyclic GC paused: {paused.cpu_s:.2f} CPU s, "
        f"{runs / paused.cpu_s:,.0f} runs per CPU-s, {paused.wall_s:.2f} s wall: the "
        f"collector's full passes over every in-flight run took "
        f"{1 - paused.cpu_s / normal.cpu_s:.0%} of the CPU time."
    )


if __name__ == "__main__":
    main()
