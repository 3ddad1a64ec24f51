"""How soon a live view sees a run's events: the lag of `Runtime.follow`.

One process, one SQLite run store, an agent run of STEPS echo calls against a scripted
model that answers after `--latency` seconds and streams its text (token deltas), so the
run is in flight while it is followed. Three followers read it at once:

- `here`: `Runtime.follow` of the Runtime that executes the run (the CLI's live view, the
  server's SSE and WebSocket): woken by the store's writer as each batch is stored;
- `fresh`: `Runtime.follow` of a second Runtime on the same store file (`runs follow` from
  another shell): woken by the store alone;
- `deltas`: the token deltas the `here` follower got (live only, never stored).

The lag of an event is the time the follower got it minus the event's own `ts` (set when
the run made it). Medians of `--repeat` runs of each figure; the process's CPU time per
step with the two followers is reported too.

    python bench/follow_latency.py [--steps 40] [--latency 0.005] [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from loopwright import AgentExecutor, AgentOptions, ModelResponse, ToolCall
from loopwright.events import ModelTextDeltaEvent
from loopwright.messages import ModelRequest
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel
from loopwright.tools.builtin import echo

TEXT = "Thinking about what to echo next, then calling the tool. " * 3


class PacedModel(ScriptedModel):
    """A scripted model that answers after `latency` seconds (the network's wait)."""

    def __init__(self, replies: list[ModelResponse], latency: float) -> None:
        super().__init__(replies, tool_mode="native", stream_chars=16)
        self.latency = latency

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(self.latency)
        return await super().complete(request)


def agent(steps: int, latency: float) -> AgentExecutor:
    replies = [
        ModelResponse(text=TEXT, tool_calls=(ToolCall(f"c{i}", "echo", {"text": f"{i}"}),))
        for i in range(steps - 1)
    ]
    model = PacedModel([*replies, ModelResponse(text="done")], latency)
    options = AgentOptions(max_iterations=steps + 1, no_progress_limit=steps + 1)
    return AgentExecutor(model, [echo], options=options)


async def follow(runtime: Runtime, run_id: str, lags: list[float], deltas: list[float]) -> int:
    count = 0
    while runtime.store.get_run(run_id) is None:  # a fresh Runtime follows a stored run
        await asyncio.sleep(0.001)
    async with contextlib.aclosing(runtime.follow(run_id)) as events:
        async for event in events:
            lag = (time.time() - event.ts) * 1000
            (deltas if isinstance(event, ModelTextDeltaEvent) else lags).append(lag)
            count += 1
    return count


async def one_run(folder: Path, index: int, steps: int, latency: float) -> dict[str, Any]:
    path = folder / f"runs{index}.db"
    store, other = SqliteRunStore(path), SqliteRunStore(path)
    runtime, fresh = Runtime(store), Runtime(other)
    run_id = f"run_{index}"
    here: tuple[list[float], list[float]] = ([], [])
    there: tuple[list[float], list[float]] = ([], [])
    cpu = time.process_time()
    try:
        handle = runtime.start_agent(agent(steps, latency), "echo", run_id=run_id)
        await asyncio.gather(
            follow(runtime, run_id, *here), follow(fresh, run_id, *there), handle.wait()
        )
        cpu = time.process_time() - cpu
        stored = len(store.events(run_id))
    finally:
        runtime.close()
        fresh.close()
        store.close()
        other.close()
    assert len(here[0]) == stored and len(there[0]) == stored, (len(here[0]), stored)
    return {
        "here": statistics.median(here[0]),
        "here_p99": sorted(here[0])[int(len(here[0]) * 0.99)],
        "fresh": statistics.median(there[0]),
        "fresh_p99": sorted(there[0])[int(len(there[0]) * 0.99)],
        "deltas": statistics.median(here[1]) if here[1] else float("nan"),
        "cpu_us_per_step": cpu / steps * 1e6,
    }


async def measure(steps: int, latency: float, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        runs = [await one_run(Path(folder), i, steps, latency) for i in range(repeat)]
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


LABELS = {
    "here": "here: lag p50 ms (the executing Runtime's follower)",
    "here_p99": "here: lag p99 ms",
    "fresh": "fresh: lag p50 ms (a second Runtime on the store)",
    "fresh_p99": "fresh: lag p99 ms",
    "deltas": "deltas: lag p50 ms (token deltas, here)",
    "cpu_us_per_step": "process CPU µs per step (run + both followers)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.005, help="seconds per reply")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(measure(args.steps, args.latency, args.repeat))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.steps} steps, {args.latency * 1000:g} ms a reply, medians of {args.repeat}:\n")
    print("| measure | value |\n| --- | ---: |")
    for key, label in LABELS.items():
        print(f"| {label} | {result[key]:.2f} |")


if __name__ == "__main__":
    main()
