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


async def throughput(runs: int, latency: float, *, collect: bool = True) -> tuple[float, int]:
    """Wall time of `runs` concurrent runs; `collect=False` pauses the cyclic GC meanwhile."""
    gc.collect()
    if not collect:
        gc.disable()
    try:
        started = time.perf_counter()
        outcomes = await asyncio.gather(*(one_run(latency) for _ in range(runs)))
        return time.perf_counter() - started, sum(outcomes)
    finally:
        gc.enable()


async def cpu_per_run_s(batch: int = 500, batches: int = 7) -> float:
    """Engine CPU time per run: the same runs one after another, zero model latency."""
    for _ in range(batch // 5):
        await one_run(0.0)
    samples = []
    for _ in range(batches):
        gc.collect()
        started = time.perf_counter()
        for _ in range(batch):
            await one_run(0.0)
        samples.append((time.perf_counter() - started) / batch)
    return statistics.median(samples)


async def memory_per_run(runs: int, latency: float) -> float:
    """Peak traced bytes per in-flight run (traced separately: tracing slows everything)."""
    gc.collect()
    tracemalloc.start()
    await asyncio.gather(*(one_run(latency) for _ in range(runs)))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cpu = asyncio.run(cpu_per_run_s())
    walls, paused = [], []
    for _ in range(args.repeats):
        wall, succeeded = asyncio.run(throughput(args.runs, args.latency))
        assert succeeded == args.runs, f"only {succeeded} of {args.runs} runs succeeded"
        walls.append(wall)
        paused.append(asyncio.run(throughput(args.runs, args.latency, collect=False))[0])
    wall, wall_paused = statistics.median(walls), statistics.median(paused)
    per_run = asyncio.run(memory_per_run(max(1, args.runs // 10), args.latency))
    ideal_wall = STEPS * args.latency
    latency_bound = args.runs / ideal_wall
    cpu_bound = 1 / cpu
    rate = args.runs / wall
    print(
        "| runs | model latency | wall s | runs/s | latency-bound ideal | of it "
        "| engine CPU bound (1 core) | of it | KB/run |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| {args.runs:,} | {args.latency * 1000:.0f} ms | {wall:.2f} | {rate:,.0f} "
        f"| {latency_bound:,.0f} | {rate / latency_bound:.0%} | {cpu_bound:,.0f} "
        f"| {rate / cpu_bound:.0%} | {per_run / 1024:.1f} |"
    )
    print(
        f"\nEngine CPU per run (3 model calls, 2 tool calls, 12 events): {cpu * 1e6:.0f} µs. "
        f"Medians of {args.repeats} bursts."
    )
    print(
        f"Same burst with the cyclic GC paused: {wall_paused:.2f} s, "
        f"{args.runs / wall_paused:,.0f} runs/s (the collector's full passes over every "
        f"in-flight run took {1 - wall_paused / wall:.0%} of the wall time)."
    )


if __name__ == "__main__":
    main()
