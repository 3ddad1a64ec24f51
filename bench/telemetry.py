"""OpenTelemetry costs nothing when it is off.

Per-step CPU cost of an agent run (a zero-latency model calling a trivial tool), measured
interleaved in one process:

- `off`: today's engine with telemetry off (`AgentExecutor.run_with`: one check per run);
- `without the feature`: the same run through what `run_with` does, minus its telemetry
  check (the sub-agent scope, `run_agent`, the model's use check);
- `on`: telemetry on, spans kept by the SDK's in-memory exporter (what tracing costs).

With telemetry off, nothing from `opentelemetry` is imported: checked at the end of the
`off` samples, before `on` is measured. CPU time of this process, medians.

    python bench/telemetry.py            # a table; --json for machine-readable output
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from typing import Any

from loopwright import AgentExecutor, AgentOptions, ModelResponse, ToolCall, telemetry, tool
from loopwright.agent._loop import run_agent
from loopwright.testing import ScriptedModel

STEPS = 50


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def agent(steps: int) -> AgentExecutor:
    replies = [
        ModelResponse(tool_calls=(ToolCall(f"c{i}", "add", {"a": i, "b": 1}),))
        for i in range(steps - 1)
    ]
    model = ScriptedModel([*replies, ModelResponse(text="done")], tool_mode="native")
    options = AgentOptions(max_iterations=steps + 1, no_progress_limit=steps + 1)
    return AgentExecutor(model, [add], options=options)


async def run(kind: str, steps: int) -> None:
    executor = agent(steps)
    context = executor.run_context("run_bench")
    setup = executor.setup("count", context)
    fx = executor.effects(context)
    if kind == "without":  # run_with without its telemetry check, the rest as it is
        result = await run_agent(setup, fx)
        executor.model.check_used(completed=result.success)  # type: ignore[attr-defined]
    else:
        result = await executor.run_with(fx, setup)
    assert result.success and len(result.steps) == steps - 1, result


async def sample(kind: str) -> float:
    gc.collect()
    started = time.process_time()
    await run(kind, STEPS)
    return (time.process_time() - started) / STEPS * 1e6


async def measure(reps: int) -> dict[str, Any]:
    samples: dict[str, list[float]] = {"off": [], "without": [], "on": []}
    for rep in range(reps):  # interleaved, and in turn first: neither gains from order
        for kind in ("off", "without") if rep % 2 else ("without", "off"):
            samples[kind].append(await sample(kind))
    imported = sorted(m for m in sys.modules if m.startswith("opentelemetry"))
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.enable(provider)
    for _ in range(reps):
        samples["on"].append(await sample("on"))
        exporter.clear()
    telemetry.disable()
    medians = {kind: statistics.median(values) for kind, values in samples.items()}
    return {
        "steps": STEPS,
        "samples": reps,
        "us_per_step": medians,
        "off_ratio": medians["off"] / medians["without"],
        "on_ratio": medians["on"] / medians["without"],
        "opentelemetry_modules_imported_while_off": imported,
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
    labels = {"off": "telemetry off", "without": "without the feature", "on": "telemetry on"}
    print(f"Per-step CPU cost, {STEPS} steps, medians of {args.reps} interleaved samples:\n")
    print("| run | µs/step |")
    print("| --- | ---: |")
    for kind, label in labels.items():
        print(f"| {label} | {results['us_per_step'][kind]:.1f} |")
    print(f"\noff / without: {results['off_ratio']:.2f}x (target: 1.00x within noise)")
    print(f"on / without: {results['on_ratio']:.2f}x")
    imported = results["opentelemetry_modules_imported_while_off"]
    print(f"opentelemetry modules imported while off: {imported}")


if __name__ == "__main__":
    main()
