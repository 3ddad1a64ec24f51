"""Scale in one process: many concurrent runs against a model with simulated latency.

Every run makes 2 tool calls and then answers; every model call takes 50 ms (asyncio sleep:
the simulated network, not synchronisation). With unlimited parallelism a run takes 150 ms,
so the ideal throughput is RUNS / 0.15 s. Reports achieved throughput against that ideal and
memory per in-flight run (peak traced allocations while all runs are in flight / RUNS).

    python bench/scale.py [--runs 10000] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
import tracemalloc

from loopwright import AgentExecutor, ModelRequest, ModelResponse, ToolCall, tool

STEPS = 3


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class SlowScriptedModel:
    """Answers like a remote model: after `latency` seconds."""

    name = "simulated"
    preferred_tool_mode = "native"

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


async def throughput(runs: int, latency: float) -> tuple[float, int]:
    gc.collect()
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(one_run(latency) for _ in range(runs)))
    return time.perf_counter() - started, sum(outcomes)


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
    args = parser.parse_args()
    wall, succeeded = asyncio.run(throughput(args.runs, args.latency))
    per_run = asyncio.run(memory_per_run(max(1, args.runs // 10), args.latency))
    ideal_wall = STEPS * args.latency
    print("| runs | model latency | wall s | runs/s | ideal runs/s | of ideal | KB/run |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| {args.runs:,} | {args.latency * 1000:.0f} ms | {wall:.2f} | {args.runs / wall:,.0f} "
        f"| {args.runs / ideal_wall:,.0f} | {ideal_wall / wall:.0%} | {per_run / 1024:.1f} |"
    )
    assert succeeded == args.runs, f"only {succeeded} of {args.runs} runs succeeded"


if __name__ == "__main__":
    main()
