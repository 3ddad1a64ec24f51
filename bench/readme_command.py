"""The README's first command as a user types it, timed, with the system prompt kept on
disk (the default) and without it (`LOOPWRIGHT_PROMPT_CACHE=0`, as before that cache).

    python bench/readme_command.py [--tries 5] [--only cached|uncached]

Each try is a fresh process: `loopwright run "What is (123 + 456) * 7?" --tools
examples/tools.py:add,examples/tools.py:multiply --json` on the embedded model, timed from
start to exit, the two settings alternating (so both see the same load). The cached
setting uses a private cache folder warmed by one untimed run first. Per try: seconds,
correct (answers 4053), load average, and per model call its seconds, prompt tokens,
tokens evaluated and tokens generated. Results: bench/results/readme-command.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "readme-command.json"
COMMAND = [
    "run",
    "What is (123 + 456) * 7?",
    "--tools",
    "examples/tools.py:add,examples/tools.py:multiply",
    "--json",
]


def calls_of(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    calls = []
    for event in lines:
        if event.get("type") != "model_response":
            continue
        usage = event["response"]["usage"]
        calls.append(
            {
                "seconds": round(event["duration_ms"] / 1000, 2),
                "prompt": usage.get("input_tokens", 0),
                "evaluated": usage.get("input_tokens", 0) - usage.get("cached_input_tokens", 0),
                "generated": usage.get("output_tokens", 0),
            }
        )
    return calls


def one_try(setting: str, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "LOOPWRIGHT_PROMPT_CACHE": str(cache) if setting == "cached" else "0"}
    with tempfile.TemporaryDirectory(prefix="readme-command-") as tmp:
        env["LOOPWRIGHT_STORE"] = f"{tmp}/runs.db"
        load = [round(x, 2) for x in os.getloadavg()]
        started = time.perf_counter()
        done = subprocess.run(
            [str(Path(sys.executable).parent / "loopwright"), *COMMAND],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    finished = next((e for e in lines if e.get("type") == "run_finished"), {})
    answer = finished.get("answer") or ""
    return {
        "setting": setting,
        "seconds": round(seconds, 2),
        "correct": done.returncode == 0 and "4053" in answer,
        "load": load,
        "calls": calls_of(lines),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--only", choices=("cached", "uncached"))
    args = parser.parse_args()
    settings = [args.only] if args.only else ["uncached", "cached"]
    runs = []
    with tempfile.TemporaryDirectory(prefix="readme-prompts-") as cache:
        if "cached" in settings:
            warm = one_try("cached", Path(cache))
            print(f"warm-up (cold cache) {warm['seconds']:.1f}s calls {warm['calls']}", flush=True)
        for index in range(args.tries):
            for setting in settings if index % 2 == 0 else settings[::-1]:
                run = one_try(setting, Path(cache))
                runs.append(run)
                calls = ", ".join(
                    f"{c['seconds']}s ({c['evaluated']}/{c['prompt']} evaluated, "
                    f"{c['generated']} out)"
                    for c in run["calls"]
                )
                print(
                    f"{setting:8} {run['seconds']:5.1f}s correct={run['correct']} "
                    f"load {run['load'][0]:.1f}: {calls}",
                    flush=True,
                )
    RESULTS.write_text(json.dumps({"runs": runs}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
