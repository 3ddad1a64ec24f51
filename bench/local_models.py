"""The embedded model candidates, measured on this machine: speed and prompt-cache reuse.

For each packaged model (`local` = Qwen2.5-Coder-1.5B, `local:small` = Qwen2.5-Coder-0.5B),
run a few tool tasks through the agent loop with the model in-process and report:
- the tasks it got right (expected tool calls and answer),
- generation speed: output tokens per second of model time,
- prompt tokens per call, and how many of them llama.cpp had to evaluate (the rest came
  from its prompt cache: the system prompt and history are a stable prefix).

    python bench/local_models.py              # a markdown table
    python bench/local_models.py local:small  # one model only

Run it on an otherwise idle machine: two CPU-heavy processes on 2 cores slow calls 10-100x.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from loopwright import AgentExecutor, AgentOptions
from loopwright.events import ModelResponseEvent
from loopwright.models._local import LocalModel, resolve_local_path
from loopwright.models._local_spec import default_threads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from tools import add, multiply  # type: ignore[import-not-found]

TASKS = [
    ("What is 17 + 25?", [("add", {"a": 17, "b": 25})], "42"),
    (
        "What is (123 + 456) * 7?",
        [("add", {"a": 123, "b": 456}), ("multiply", {"a": 579, "b": 7})],
        "4053",
    ),
    ("Multiply 12 by 11 with the tool.", [("multiply", {"a": 12, "b": 11})], "132"),
]


@dataclass
class Figures:
    spec: str
    right: int = 0
    output_tokens: int = 0
    model_seconds: float = 0.0
    prompt_sizes: list[int] = field(default_factory=list)
    evaluated: list[int] = field(default_factory=list)


async def measure(spec: str) -> Figures:
    name = spec.partition(":")[2]
    model = LocalModel(resolve_local_path(name), name=spec, threads=default_threads())
    figures = Figures(spec)
    for request, expected_calls, expected_answer in TASKS:
        agent = AgentExecutor(model, [add, multiply], options=AgentOptions(temperature=0.0))
        calls = []
        answer = ""
        async for event in agent.stream(request):
            if isinstance(event, ModelResponseEvent):
                usage = event.response.get("usage", {})
                figures.output_tokens += int(usage.get("output_tokens", 0))
                figures.prompt_sizes.append(int(usage.get("input_tokens", 0)))
                figures.evaluated.append(
                    int(usage.get("input_tokens", 0)) - int(usage.get("cached_input_tokens", 0))
                )
                figures.model_seconds += event.duration_ms / 1000
                calls.extend((a["tool"], a["arguments"]) for a in event.actions)
                answer = event.final_answer or answer
        figures.right += calls == expected_calls and expected_answer in answer
    return figures


def row(figures: Figures) -> str:
    speed = figures.output_tokens / figures.model_seconds if figures.model_seconds else 0.0
    # a new run starts a new conversation: its first call shares only the system prompt
    evaluated = statistics.median(figures.evaluated[1:]) if len(figures.evaluated) > 1 else 0
    prompt = statistics.median(figures.prompt_sizes[1:]) if len(figures.prompt_sizes) > 1 else 0
    return (
        f"| {figures.spec} | {figures.right}/{len(TASKS)} | {speed:.1f} | "
        f"{len(figures.prompt_sizes)} | {prompt:.0f} | {evaluated:.0f} | "
        f"{figures.model_seconds / max(1, len(figures.prompt_sizes)):.1f} |"
    )


def main() -> None:
    specs = sys.argv[1:] or ["local", "local:small"]
    print("| model | tasks right | output tokens/s | model calls | median prompt tokens/call "
          "| median prompt tokens evaluated/call | s per call |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for spec in specs:
        started = time.perf_counter()
        figures = asyncio.run(measure(spec))
        print(row(figures), flush=True)
        print(f"<!-- {spec}: {time.perf_counter() - started:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
