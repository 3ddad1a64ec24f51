"""Token streaming costs nothing when nobody listens.

Per-step CPU cost of an agent run on a zero-latency model that streams (a ScriptedModel
handing out its text in pieces), measured interleaved in one process:

- `no listener, with streaming`: today's engine, nobody listening;
- `no listener, without streaming`: the same run through effects whose `call_model` is
  the one before token streaming existed (`model.complete`, nothing else);
- `listener, not streaming`: someone listens, the model's text comes whole (deltas off);
- `listener, streaming`: someone listens and gets the deltas (the cost of the feature
  when it is used).

The first ratio is the claim (about 1.00x); the last two show what streaming costs when
it is used. CPU time of this process, medians of interleaved samples.

    python bench/streaming.py            # a table; --json for machine-readable output
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
from loopwright.effects import DeltaSettings, EventLog, LiveEffects
from loopwright.events import Event
from loopwright.messages import ModelRequest
from loopwright.models import Model
from loopwright.testing import ScriptedModel

STEPS = 50
TEXT = "Thinking about the next number to add, then calling the tool. " * 4


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(steps: int) -> list[ModelResponse]:
    calls = [
        ModelResponse(text=TEXT, tool_calls=(ToolCall(f"c{i}", "add", {"a": i, "b": 1}),))
        for i in range(steps - 1)
    ]
    return [*calls, ModelResponse(text="done")]


class BeforeStreaming(LiveEffects):
    """`call_model` as it was before token streaming: the model's `complete`, nothing else."""

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        if timeout is None:
            return await model.complete(request)
        async with asyncio.timeout(timeout):
            return await model.complete(request)


def agent(steps: int) -> AgentExecutor:
    model = ScriptedModel(script(steps), tool_mode="native", stream_chars=8)
    options = AgentOptions(max_iterations=steps + 1, no_progress_limit=steps + 1)
    return AgentExecutor(model, [add], options=options)


async def _ignore(event: Event) -> None:
    return None


async def run(kind: str, steps: int) -> None:
    """One run; every kind builds it the same way, only the effects differ."""
    executor = agent(steps)
    sink = None if kind in ("with", "without") else _ignore
    log = EventLog("run_bench", scrubber=executor.scrubber, sink=sink)
    effects: LiveEffects
    if kind == "without":
        effects = BeforeStreaming(log)
    elif kind == "listened_whole":
        effects = LiveEffects(log, deltas=None)
    else:
        effects = LiveEffects(log, deltas=DeltaSettings())
    result = await executor.run_with(
        effects, executor.setup("count", executor.run_context("run_bench"))
    )
    assert result.success and len(result.steps) == steps - 1, result


async def sample(kind: str, steps: int) -> float:
    gc.collect()
    started = time.process_time()
    await run(kind, steps)
    return (time.process_time() - started) / steps * 1e6


KINDS = {
    "with": "no listener, with streaming",
    "without": "no listener, without streaming",
    "listened_whole": "listener, not streaming",
    "listened_stream": "listener, streaming",
}


async def measure(reps: int) -> dict[str, Any]:
    samples: dict[str, list[float]] = {kind: [] for kind in KINDS}
    kinds = list(KINDS)
    for rep in range(reps):  # interleaved, each order in turn: none gains from its place
        for kind in kinds if rep % 2 else reversed(kinds):
            samples[kind].append(await sample(kind, STEPS))
    medians = {kind: statistics.median(values) for kind, values in samples.items()}
    return {
        "steps": STEPS,
        "samples": reps,
        "us_per_step": medians,
        "no_listener_ratio": medians["with"] / medians["without"],
        "listener_stream_ratio": medians["listened_stream"] / medians["listened_whole"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=41)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = asyncio.run(measure(args.reps))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"Per-step CPU cost, {STEPS} steps, medians of {args.reps} interleaved samples:\n")
    print("| run | µs/step |")
    print("| --- | ---: |")
    for kind, label in KINDS.items():
        print(f"| {label} | {results['us_per_step'][kind]:.1f} |")
    print(
        f"\nno listener, with/without streaming: {results['no_listener_ratio']:.2f}x "
        "(target: 1.00x within noise)"
    )
    print(f"listener, streaming/whole: {results['listener_stream_ratio']:.2f}x")


if __name__ == "__main__":
    main()
