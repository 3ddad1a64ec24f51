"""Engine overhead per step: loopwright vs a minimal hand-written asyncio loop.

Both run the same scenario: a zero-latency model that calls an `add` tool N-1 times and
then answers; the tool is trivial. What is left is the engine's own cost per step.

    python bench/overhead.py            # prints a table; --json for machine-readable output
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import time
from typing import Any

from loopwright import AgentExecutor, AgentOptions, ModelResponse, ScriptedModel, ToolCall, tool
from loopwright.messages import Message, ModelRequest

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


def one_sample_us(runner: Any, steps: int) -> float:
    gc.collect()
    started = time.perf_counter()
    asyncio.run(runner(steps))
    return (time.perf_counter() - started) / steps * 1e6


def measure(repeats: int) -> list[dict[str, float]]:
    """Interleaved samples (ours, floor, ours, floor...); the fastest of each is reported,
    since on a shared machine noise only ever adds time."""
    rows = []
    for steps in SIZES:
        reps = max(5, repeats * 40 // steps)
        ours: list[float] = []
        floor: list[float] = []
        for _ in range(reps):
            ours.append(one_sample_us(loopwright_run, steps))
            floor.append(one_sample_us(floor_run, steps))
        best_ours, best_floor = min(ours), min(floor)
        rows.append(
            {
                "steps": steps,
                "loopwright_us": best_ours,
                "floor_us": best_floor,
                "ratio": best_ours / best_floor,
                "loopwright_median_us": statistics.median(ours),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = measure(args.repeats)
    flatness = rows[-1]["loopwright_us"] / rows[0]["loopwright_us"]
    if args.json:
        print(json.dumps({"rows": rows, "flatness_500_vs_20": flatness}, indent=2))
        return
    print("| N | loopwright µs/step | hand-written loop µs/step | ratio |")
    print("| ---: | ---: | ---: | ---: |")
    for row in rows:
        print(
            f"| {row['steps']} | {row['loopwright_us']:.1f} | {row['floor_us']:.1f} "
            f"| {row['ratio']:.2f}x |"
        )
    print(f"\nper-step cost at N=500 vs N=20: {flatness:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
