"""Engine overhead per step: loopwright vs a minimal hand-written asyncio loop.

Both run the same scenario: a zero-latency model that calls an `add` tool N-1 times and
then answers; the tool is trivial. What is left is the engine's own cost per step.

    python bench/overhead.py            # prints the tables; --json for machine-readable output

Measured two ways, each interleaved with the floor: every run in a fresh event loop (what a
script or a CLI call pays, loop start-up included), and every run inside one event loop that
is already running (what a server pays; the engine's own cost, nothing else). Times are the
CPU time of this process (`time.process_time`), so other processes taking the CPU of a
shared machine do not count as engine time; medians of interleaved samples.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import time
from typing import Any

from loopwright import AgentExecutor, AgentOptions, ModelResponse, ToolCall, tool
from loopwright.messages import Message, ModelRequest
from loopwright.testing import ScriptedModel

SIZES = (20, 100, 500)


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


async def loopwright_run(steps: int) -> None:
    model = ScriptedModel(script(steps), tool_mode="native")
    options = AgentOptions(max_iterations=steps + 1, no_progress_limit=steps + 1)
    result = await AgentExecutor(model, [add], options=options).run("count")
    assert result.success and len(result.steps) == steps - 1, result


async def floor_run(steps: int) -> None:
    """The least a ReAct loop can do: call the model, call the tool, append, repeat."""
    model = ScriptedModel(script(steps), tool_mode="native")
    messages: list[Message] = [Message.user("count")]
    functions: dict[str, Any] = {"add": add.function}
    while True:
        response = await model.complete(ModelRequest(messages=tuple(messages)))
        if not response.tool_calls:
            break
        messages.append(Message.assistant(response.text, response.tool_calls))
        for call in response.tool_calls:
            output = await functions[call.name](**call.arguments)
            messages.append(Message.tool(str(output), call.id, call.name))


def fresh_loop_us(runner: Any, steps: int) -> float:
    """One run in its own event loop (`asyncio.run`), as a script or CLI call makes it."""
    gc.collect()
    started = time.process_time()
    asyncio.run(runner(steps))
    return (time.process_time() - started) / steps * 1e6


async def in_loop_us(runner: Any, steps: int) -> float:
    """One run inside an event loop that is already running, as a server makes it."""
    gc.collect()
    started = time.process_time()
    await runner(steps)
    return (time.process_time() - started) / steps * 1e6


def row(steps: int, ours: list[float], floor: list[float]) -> dict[str, float]:
    median_ours, median_floor = statistics.median(ours), statistics.median(floor)
    return {
        "steps": steps,
        "samples": len(ours),
        "loopwright_us": median_ours,
        "floor_us": median_floor,
        "ratio": median_ours / median_floor,
        "loopwright_min_us": min(ours),
        "floor_min_us": min(floor),
    }


async def interleaved_in_loop(steps: int, reps: int) -> dict[str, float]:
    ours: list[float] = []
    floor: list[float] = []
    for _ in range(reps):
        ours.append(await in_loop_us(loopwright_run, steps))
        floor.append(await in_loop_us(floor_run, steps))
    return row(steps, ours, floor)


def measure(repeats: int) -> dict[str, list[dict[str, float]]]:
    """Interleaved samples (ours, floor, ours, floor...), medians reported: on a shared
    machine the two see the same noise. `repeats` scales the number of samples."""
    fresh: list[dict[str, float]] = []
    running: list[dict[str, float]] = []
    for steps in SIZES:
        reps = max(9, repeats * 800 // steps)
        ours: list[float] = []
        floor: list[float] = []
        for _ in range(reps):
            ours.append(fresh_loop_us(loopwright_run, steps))
            floor.append(fresh_loop_us(floor_run, steps))
        fresh.append(row(steps, ours, floor))
        running.append(asyncio.run(interleaved_in_loop(steps, reps)))
    return {"fresh_loop": fresh, "running_loop": running}


def print_table(title: str, rows: list[dict[str, float]]) -> None:
    print(f"{title}\n")
    print("| N | loopwright µs/step | hand-written loop µs/step | ratio |")
    print("| ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['steps']} | {r['loopwright_us']:.1f} | {r['floor_us']:.1f} | {r['ratio']:.2f}x |"
        )
    flatness = rows[-1]["loopwright_us"] / rows[0]["loopwright_us"]
    print(f"\nper-step cost at N=500 vs N=20: {flatness:.2f}x (target <= 1.5x)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = measure(args.repeats)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print_table("Each run in a fresh event loop (asyncio.run; medians):", results["fresh_loop"])
    print_table("Each run inside one running event loop (medians):", results["running_loop"])


if __name__ == "__main__":
    main()
