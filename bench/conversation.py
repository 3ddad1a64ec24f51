"""A conversation of five turns with tool calls on the embedded model: does the prompt
cache serve every turn's history, so that each turn evaluates only what is new?

    python bench/conversation.py [--model local]

One process, one Runtime on a fresh SQLite store, the calculator tools of the quick start
(examples/tools.py: add, multiply). Each turn is a follow-up (`runtime.conversation`): its
history is built from the store, then sent. Per model call: the prompt tokens sent, the
tokens the model evaluated (sent minus those its prompt cache already held) and, for a
turn's first call, the tokens new since the request before it (the earlier turn's answer
and the new request: what the turn has to evaluate at least). Results:
bench/results/conversation.json, and a table on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from loopwright import AgentExecutor, AgentOptions
from loopwright.events import ModelResponseEvent
from loopwright.models import resolve_model
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.tools import resolve_tools

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "conversation.json"
TOOLS = [f"{ROOT / 'examples' / 'tools.py'}:{name}" for name in ("add", "multiply")]

TURNS = [
    "What is (123 + 456) * 7?",
    "Now add 1000 to that.",
    "Multiply the result by 3.",
    "Add 250 to it.",
    "What is that times 2?",
]


def calls_of(store: SqliteRunStore, run_id: str) -> list[dict[str, Any]]:
    calls = []
    for event in store.events(run_id):
        if isinstance(event, ModelResponseEvent):
            usage = event.response.get("usage", {})
            sent = int(usage.get("input_tokens", 0))
            cached = int(usage.get("cached_input_tokens", 0))
            calls.append(
                {
                    "iteration": event.iteration_number,
                    "sent": sent,
                    "evaluated": sent - cached,
                    "cached": cached,
                    "generated": int(usage.get("output_tokens", 0)),
                    "seconds": round(event.duration_ms / 1000, 2),
                    "action": [a["tool"] for a in event.actions] or None,
                    "answer": event.final_answer,
                }
            )
    return calls


async def converse(model_spec: str, folder: Path) -> list[dict[str, Any]]:
    model = resolve_model(model_spec)
    tools = resolve_tools(TOOLS)
    agent = AgentExecutor(model, tools, options=AgentOptions(max_iterations=6))
    store = SqliteRunStore(folder / "runs.db")
    runtime = Runtime(store)
    chat = runtime.conversation(agent)
    turns: list[dict[str, Any]] = []
    last_sent = 0
    try:
        for number, request in enumerate(TURNS, start=1):
            started = time.perf_counter()
            result = await chat.send(request)
            calls = calls_of(store, result.run_id)
            turns.append(
                {
                    "turn": number,
                    "request": request,
                    "status": result.status,
                    "answer": result.answer,
                    "seconds": round(time.perf_counter() - started, 2),
                    "new_since_last_request": calls[0]["sent"] - last_sent if last_sent else None,
                    "calls": calls,
                }
            )
            last_sent = calls[-1]["sent"] if calls else last_sent
            print(table(turns[-1:], header=number == 1), flush=True)  # as it goes: it is slow
    finally:
        runtime.close()
    return turns


def table(turns: list[dict[str, Any]], *, header: bool = True) -> str:
    lines = ["turn  call  sent  evaluated  cached  new since last request  answer"][: int(header)]
    for turn in turns:
        for index, call in enumerate(turn["calls"], start=1):
            new = turn["new_since_last_request"] if index == 1 else None
            lines.append(
                f"{turn['turn']:>4}  {index:>4}  {call['sent']:>4}  {call['evaluated']:>9}  "
                f"{call['cached']:>6}  {'' if new is None else new:>22}  "
                f"{call['answer'] or call['action']}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local", help="a model spec (default: local)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="conversation-") as tmp:
        turns = asyncio.run(converse(args.model, Path(tmp)))
    report = {
        "model": args.model,
        "machine": {
            "cpus": os.cpu_count(),
            "load": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
        },
        "turns": turns,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
