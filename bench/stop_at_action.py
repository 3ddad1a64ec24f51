"""Stopping a reply at its first action, measured on the user's path, before and after.

    python bench/stop_at_action.py readme --before SRC [--tries 5] [--command readme|demo]
    python bench/stop_at_action.py eval --before SRC [--only ID,ID | --first N]
        [--variants before,after] [--out FILE]
    python bench/stop_at_action.py peers --python bench/.venv-peers/bin/python [--only ID,ID]
    python bench/stop_at_action.py tables

`before` is the engine before the change: SRC is the `src` folder of a checkout of it (a git
worktree at the commit), put first on PYTHONPATH; `after` is this tree's `src`. The same
machine, the same model, one invocation at a time, alternating (before, after, after,
before, ...) so both see the same load; each figure is stored with `os.getloadavg()`.

- `readme`: the README's first command (`loopwright run "What is (123 + 456) * 7?" --tools
  examples/tools.py:add,examples/tools.py:multiply`, the embedded model), or `make demo`'s
  (the same with `--model local`), each try a fresh process, timed from start to exit, with
  `--json` to read every reply. Results: bench/results/stop-at-action-readme.json.
- `eval`: the suite (evals/) against llama-cpp-python's server (started once, 2 threads,
  as bench/eval_compare.py does), one process per (task, variant), the suite's own runner
  and checker. Results: bench/results/stop-at-action-eval.json.
- `peers`: smolagents on the same server and tasks, as the reference (bench/peers/
  eval_peers.py under the peers' virtualenv). Results: bench/results/stop-at-action-
  smolagents.json.
- `tables`: the Markdown tables of docs/benchmarks.md from the JSON files.

Tokens: a reply's output tokens are what the model generated: after, the adapter's count
(the embedded model's are llama.cpp's; a stream cut at the action counts one token a
piece); before, the same, except that llama-cpp-python's server reports no usage in a
stream, so the reply's text is tokenized with the model's own tokenizer. The part the
engine uses is the reply up to the end of its first action (loopwright.parsing's
`ActionEnd`; the whole reply when it has none), tokenized the same way.
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
RESULTS = ROOT / "bench" / "results"
README_JSON = RESULTS / "stop-at-action-readme.json"
EVAL_JSON = RESULTS / "stop-at-action-eval.json"
PEERS_JSON = RESULTS / "stop-at-action-smolagents.json"
QUESTION = "What is (123 + 456) * 7?"
TOOLS = "examples/tools.py:add,examples/tools.py:multiply"
COMMANDS = {
    "readme": ["run", QUESTION, "--tools", TOOLS],
    "demo": ["run", QUESTION, "--model", "local", "--tools", TOOLS],
}
VARIANTS = ("before", "after")


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def order(index: int) -> tuple[str, str]:
    """before, after; then after, before; ... (each sees the other's neighbourhood)."""
    return VARIANTS if index % 2 == 0 else VARIANTS[::-1]


def env_for(variant: str, before_src: str) -> dict[str, str]:
    src = before_src if variant == "before" else str(ROOT / "src")
    return {**os.environ, "PYTHONPATH": src, "LOOPWRIGHT_PURE": "1"}


def saved(path: Path) -> dict[str, Any]:
    if path.is_file():
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
    return {"runs": []}


def save(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def replies_of(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "text": e["response"]["text"],
            "output_tokens": e["response"]["usage"].get("output_tokens", 0),
            "finish_reason": e["response"].get("finish_reason"),
            "seconds": round(e["duration_ms"] / 1000, 2),
        }
        for e in lines
        if e.get("type") == "model_response"
    ]


def readme(args: argparse.Namespace) -> None:
    data = saved(README_JSON)
    cli = [str(Path(sys.executable).parent / "loopwright"), *COMMANDS[args.command]]
    for index in range(args.tries):
        for variant in order(index):
            with tempfile.TemporaryDirectory(prefix="stop-at-action-") as tmp:
                env = {**env_for(variant, args.before), "LOOPWRIGHT_STORE": f"{tmp}/runs.db"}
                if args.threads:  # (the CLI's default: the physical cores)
                    env["LOOPWRIGHT_LOCAL_THREADS"] = str(args.threads)
                before_load = load()
                started = time.perf_counter()
                done = subprocess.run(
                    [*cli, "--json"], cwd=ROOT, env=env, capture_output=True, text=True
                )
                seconds = time.perf_counter() - started
            lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
            finished: dict[str, Any] = next(
                (e for e in lines if e.get("type") == "run_finished"), {}
            )
            answer = finished.get("answer") or ""
            run = {
                "command": args.command,
                "threads": args.threads or None,
                "variant": variant,
                "seconds": round(seconds, 2),
                "correct": done.returncode == 0 and "4053" in answer,
                "answer": answer,
                "load_before": before_load,
                "load_after": load(),
                "replies": replies_of(lines),
            }
            data["runs"].append(run)
            save(README_JSON, data)
            print(
                f"{args.command} {variant:6} {seconds:6.1f}s correct={run['correct']} "
                f"load {before_load[0]:.1f}->{run['load_after'][0]:.1f}",
                flush=True,
            )


def task_child(args: argparse.Namespace) -> None:
    """One eval task with whichever loopwright is on the path; one JSON line out."""
    import asyncio
    import dataclasses

    from loopwright.agent import AgentExecutor, AgentOptions
    from loopwright.evals import load_suite
    from loopwright.models import OpenAIModel, RetryPolicy

    suite = load_suite(ROOT / "evals")
    task = next(t for t in suite.tasks if t.id == args.task)
    lines: list[dict[str, Any]] = []

    async def see(event: Any) -> None:
        if event.type == "model_response":
            lines.append(
                {"type": event.type, "response": event.response, "duration_ms": event.duration_ms}
            )

    async def run() -> dict[str, Any]:
        model = OpenAIModel(
            "qwen", base_url=args.base_url, retry=RetryPolicy(max_retries=0), timeout=args.timeout
        )
        with tempfile.TemporaryDirectory(prefix=f"eval-{task.id}-") as tmp:
            workspace = Path(tmp)
            for name, text in task.files.items():
                (workspace / name).parent.mkdir(parents=True, exist_ok=True)
                (workspace / name).write_text(text, encoding="utf-8")
            options = dataclasses.replace(AgentOptions(), max_iterations=task.max_iterations)
            agent = AgentExecutor(
                model, suite.tools_for(task), options=options, workspace=workspace
            )
            started = time.perf_counter()
            result = await agent.run(task.request, on_event=see)
            wall = time.perf_counter() - started
            problems = task.expect.failures(result, workspace)
        return {"passed": not problems, "problems": problems, "seconds": round(wall, 2)}

    outcome = asyncio.run(run())
    print(json.dumps({**outcome, "replies": replies_of(lines)}))


def eval_suite(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from eval_compare import SERVERS, free_port, running

    from loopwright.evals import load_suite

    tasks = [t.id for t in load_suite(ROOT / "evals").tasks]
    if args.only:
        tasks = [t for t in tasks if t in args.only.split(",")]
    elif args.first:
        tasks = tasks[: args.first]
    out = Path(args.out) if args.out else EVAL_JSON
    variants = tuple(args.variants.split(","))
    data = saved(out)
    done = {(r["task"], r["variant"]) for r in data["runs"]}
    with tempfile.TemporaryDirectory(prefix="stop-at-action-server-") as tmp:
        server = SERVERS["llama-cpp-python"]
        with running(server, free_port(), args.threads, Path(tmp) / "server.log") as url:
            data["server"] = {"name": server.name, "threads": args.threads}
            for index, task_id in enumerate(tasks):
                for variant in order(index):
                    if variant in variants and (task_id, variant) not in done:
                        data["runs"].append(one_task(args, url, task_id, variant))
                        save(out, data)


def peers(args: argparse.Namespace) -> None:
    """smolagents on the same server, the same tasks (bench/peers/eval_peers.py, with its
    counting proxy for tokens), as the reference a user would pick instead."""
    sys.path.insert(0, str(ROOT / "bench"))
    from eval_compare import SERVERS, free_port, running

    out = Path(args.out) if args.out else PEERS_JSON

    with tempfile.TemporaryDirectory(prefix="stop-at-action-server-") as tmp:
        server = SERVERS["llama-cpp-python"]
        with running(server, free_port(), args.threads, Path(tmp) / "server.log") as url:
            command = [
                args.python, str(ROOT / "bench" / "peers" / "eval_peers.py"), "--base-url", url,
                "--frameworks", "smolagents", "--timeout", str(args.timeout),
                "--out", str(out), "--resume",
            ]  # fmt: skip
            if args.only:
                command += ["--only", args.only]
            env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
            subprocess.run(command, env=env, check=True)
    data = json.loads(out.read_text(encoding="utf-8"))
    data["threads"], data["load_after"] = args.threads, load()
    save(out, data)


def one_task(args: argparse.Namespace, url: str, task_id: str, variant: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "task", "--task", task_id, "--base-url", url]
    command += ["--timeout", str(args.timeout)]
    before_load = load()
    started = time.perf_counter()
    try:
        ran = subprocess.run(
            command, env=env_for(variant, args.before), capture_output=True, text=True,
            timeout=args.timeout,
        )  # fmt: skip
        last = ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else "{}"
        outcome = json.loads(last) if ran.returncode == 0 else {"problems": [ran.stderr[-300:]]}
    except subprocess.TimeoutExpired:
        outcome = {"problems": [f"timed out after {args.timeout:g}s"]}
    run: dict[str, Any] = {
        "task": task_id,
        "variant": variant,
        "passed": bool(outcome.get("passed")),
        "problems": outcome.get("problems", []),
        "seconds": outcome.get("seconds", round(time.perf_counter() - started, 2)),
        "load_before": before_load,
        "load_after": load(),
        "replies": outcome.get("replies", []),
    }
    mark = "ok  " if run["passed"] else "FAIL"
    print(
        f"{mark} {task_id:24} {variant:6} {run['seconds']:6.1f}s "
        f"load {before_load[0]:.1f}->{run['load_after'][0]:.1f}",
        flush=True,
    )
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="what", required=True)
    first = commands.add_parser("readme")
    first.add_argument("--before", required=True, help="src folder of the engine before")
    first.add_argument("--tries", type=int, default=5)
    first.add_argument("--command", choices=sorted(COMMANDS), default="readme")
    first.add_argument("--threads", type=int, default=0, help="LOOPWRIGHT_LOCAL_THREADS")
    suite = commands.add_parser("eval")
    suite.add_argument("--before", default="", help="needed when the variants hold before")
    suite.add_argument("--variants", default="before,after", help="which to run")
    suite.add_argument("--out", default="", help=f"results (default {EVAL_JSON.name})")
    suite.add_argument("--only", default="")
    suite.add_argument("--first", type=int, default=0)
    suite.add_argument("--threads", type=int, default=2)
    suite.add_argument("--timeout", type=float, default=600.0)
    peer = commands.add_parser("peers")
    peer.add_argument("--python", required=True, help="the peers' virtualenv's python")
    peer.add_argument("--out", default="", help=f"results, resumed (default {PEERS_JSON.name})")
    peer.add_argument("--only", default="")
    peer.add_argument("--threads", type=int, default=2)
    peer.add_argument("--timeout", type=float, default=600.0)
    child = commands.add_parser("task")
    child.add_argument("--task", required=True)
    child.add_argument("--base-url", required=True)
    child.add_argument("--timeout", type=float, default=600.0)
    commands.add_parser("tables")
    args = parser.parse_args()
    if args.what == "readme":
        readme(args)
    elif args.what == "eval":
        eval_suite(args)
    elif args.what == "peers":
        peers(args)
    elif args.what == "task":
        task_child(args)
    else:
        from stop_at_action_tables import print_tables

        print_tables(README_JSON, EVAL_JSON, PEERS_JSON)


if __name__ == "__main__":
    main()
