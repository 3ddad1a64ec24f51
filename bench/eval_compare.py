"""The tool-use evaluation suite, the same model, loopwright vs peers, on two servers.

    .venv/bin/python bench/eval_compare.py [--servers llama-cpp-python,llama-server]
        [--only ID,ID] [--frameworks smolagents,...] [--fresh]

For each server, started once on 127.0.0.1 with the embedded model (Qwen2.5-Coder-1.5B-
Instruct Q4_K_M, the same GGUF):
- `llama-cpp-python`: llama-cpp-python's OpenAI-compatible server (`python -m
  llama_cpp.server`, with the embedded model's loading rule);
- `llama-server`: llama.cpp's own `llama-server --jinja` (built by `make llama-server` from
  the llama.cpp source the wheel vendors), which parses Qwen's tool calls into `tool_calls`;
then, against that server:
- loopwright: `loopwright eval evals/ --model openai:qwen --base-url URL --only TASK`, one
  process per task with the same wall-clock limit the peers get;
- the peers: bench/peers/eval_peers.py under bench/.venv-peers.
Results per server in bench/results/ (SERVERS below names the files); the table goes to
bench/results/eval-compare.md (and is printed).

It resumes: tasks already in the JSON files are kept and only the rest run (`--fresh`
starts over). Every task line shows the pace: n/N done, elapsed, estimated time left.
`--tables-only` rebuilds the table from the JSON files already written (no server, no runs).
CPU heavy: a model call takes seconds on two cores, and the full suite through five
frameworks on two servers takes many hours; it runs one task at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from loopwright.evals import load_suite
from loopwright.evals._progress import ProgressClock
from loopwright.models._local import resolve_local_path
from loopwright.models._local_spec import default_threads

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "peers"))
from eval_compare_docs import CHART, PAGE, write_block, write_chart  # noqa: E402
from eval_peers import (  # noqa: E402
    FRAMEWORKS,
    LABELS,
    markdown_table,
    summarise,
    wait_for_idle_server,
)

RESULTS = ROOT / "bench" / "results"
COMPARE_MD = RESULTS / "eval-compare.md"
PEERS_PYTHON = ROOT / "bench" / ".venv-peers" / "bin" / "python"
LOOPWRIGHT = Path(sys.executable).parent / "loopwright"
LLAMA_VERSION = "0.3.36"
LLAMA_SERVER = Path("~/.cache/loopwright/bin/portable-avx2").expanduser() / (
    f"llama-server-{LLAMA_VERSION}"
)
SERVER_START_LIMIT_S = 300
CONTEXT = 8192
PYTHON_SERVER_MAIN = (
    "import runpy\n"
    "from loopwright.models._local import chosen_cpu_buffers\n"
    "with chosen_cpu_buffers():\n"
    "    runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n"
)
"""llama-cpp-python's server with the embedded model's loading rule (extra buffer types only
where they are safe; see models/_local.py)."""


@dataclass(frozen=True)
class Server:
    name: str
    label: str
    loopwright_json: Path
    peers_json: Path

    def command(self, port: int, threads: int) -> list[str]:
        model = str(resolve_local_path(""))
        if self.name == "llama-server":
            if not LLAMA_SERVER.is_file():
                raise SystemExit(f"no {LLAMA_SERVER}: `make llama-server` builds it (once)")
            return [
                str(LLAMA_SERVER), "--model", model, "--host", "127.0.0.1", "--port", str(port),
                "--jinja", "--threads", str(threads), "--threads-batch", str(threads),
                "--ctx-size", str(CONTEXT), "--parallel", "1", "--no-repack",
                "--alias", "qwen", "--no-webui",
            ]  # fmt: skip
        return [
            sys.executable, "-c", PYTHON_SERVER_MAIN,
            "--model", model, "--host", "127.0.0.1", "--port", str(port),
            "--n_threads", str(threads), "--n_ctx", str(CONTEXT),
        ]  # fmt: skip


SERVERS = {
    "llama-cpp-python": Server(
        "llama-cpp-python",
        "llama-cpp-python server",
        RESULTS / "eval-loopwright-server.json",
        RESULTS / "eval-peers.json",
    ),
    "llama-server": Server(
        "llama-server",
        "llama.cpp llama-server --jinja",
        RESULTS / "eval-loopwright-llama-server.json",
        RESULTS / "eval-peers-llama-server.json",
    ),
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running(server: Server, port: int, threads: int, log: Path) -> Iterator[str]:
    command = server.command(port, threads)
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + SERVER_START_LIMIT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{server.name} exited with {process.returncode}; see {log}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{server.name} did not answer within {SERVER_START_LIMIT_S}s")
            time.sleep(0.5)  # polling a condition with a deadline
        yield url
    finally:
        process.terminate()  # a server may wait for a request in progress; not for long
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def kept_outcomes(path: Path, task_ids: list[str]) -> list[dict[str, Any]]:
    """The outcomes a previous run already wrote for these tasks (resuming)."""
    if not path.is_file():
        return []
    wanted = set(task_ids)
    return [t for t in json.loads(path.read_text(encoding="utf-8"))["tasks"] if t["id"] in wanted]


def run_loopwright(
    server: Server, url: str, task_ids: list[str], levels: dict[str, int], args: Any
) -> None:
    """One `loopwright eval --only TASK` per task, each with the same wall limit as a peer's;
    tasks already in the server's JSON file are kept unless --fresh."""
    outcomes = [] if args.fresh else kept_outcomes(server.loopwright_json, task_ids)
    done = {o["id"] for o in outcomes}
    todo = [t for t in task_ids if t not in done]
    print(f"loopwright on {server.label}: {len(done)} kept, {len(todo)} to run", flush=True)
    pace = ProgressClock(len(todo), unit="tasks")
    with tempfile.TemporaryDirectory(prefix="eval-compare-") as tmp:
        for task_id in todo:
            report = Path(tmp) / f"{task_id}.json"
            command = [
                str(LOOPWRIGHT), "eval", str(ROOT / "evals"), "--model", "openai:qwen",
                "--base-url", url, "--only", task_id, "--report", str(report),
            ]  # fmt: skip
            started = time.perf_counter()
            try:
                ran = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
                if ran.returncode == 0 and report.is_file():
                    outcome = json.loads(report.read_text(encoding="utf-8"))["tasks"][0]
                else:
                    outcome = failed(task_id, levels, started, ran.stderr.strip()[-400:])
            except subprocess.TimeoutExpired:
                outcome = failed(task_id, levels, started, f"timed out after {args.timeout:g}s")
                wait_for_idle_server(url)
            outcomes.append(outcome)
            pace.advance()
            mark = "ok  " if outcome["passed"] else "FAIL"
            why = "" if outcome["passed"] else "; ".join(outcome["problems"])[:110]
            print(
                f"{mark} {'loopwright':13} {task_id:24} {outcome['wall_s']:6.1f}s [{pace.text()}] "
                f"{why}",
                flush=True,
            )
            write_loopwright_report(server, outcomes, url, args, complete=False)
    write_loopwright_report(server, outcomes, url, args, complete=True)


def failed(task_id: str, levels: dict[str, int], started: float, why: str) -> dict[str, Any]:
    return {
        "id": task_id,
        "level": levels[task_id],
        "passed": False,
        "problems": [why],
        "iterations": 0,
        "tool_calls": [],
        "input_tokens": 0,
        "output_tokens": 0,
        "wall_s": round(time.perf_counter() - started, 3),
        "answer": None,
    }


def write_loopwright_report(
    server: Server, outcomes: list[dict[str, Any]], url: str, args: Any, *, complete: bool
) -> None:
    report = {
        "model": "openai:qwen",
        "server": server.name,
        "base_url": url,
        "timeout_s": args.timeout,
        "threads": args.threads,
        "complete": complete,
        "summary": summarise(outcomes),
        "tasks": outcomes,
    }
    server.loopwright_json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def run_peers(server: Server, url: str, args: Any) -> None:
    if not PEERS_PYTHON.is_file():
        raise SystemExit("no bench/.venv-peers: `make eval-compare` makes it")
    command = [
        str(PEERS_PYTHON), str(ROOT / "bench" / "peers" / "eval_peers.py"),
        "--base-url", url, "--frameworks", args.frameworks, "--timeout", str(args.timeout),
        "--out", str(server.peers_json),
    ]  # fmt: skip
    if args.only:
        command += ["--only", args.only]
    if not args.fresh:
        command.append("--resume")
    subprocess.run(command, check=True)
    data = json.loads(server.peers_json.read_text(encoding="utf-8"))
    for framework in args.frameworks.split(","):  # the server's threads, per framework
        entry = data["results"].get(LABELS.get(framework, framework))
        if entry is not None:
            entry["threads"] = args.threads
    server.peers_json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


FAILURE_CLASSES = (
    ("timed out", "timeout"),
    ("child process failed", "crash"),
    ("expected no tool calls", "needless tool call"),
    ("expected calls", "missing or wrong tool calls"),
    ("answer lacks", "wrong answer"),
    ("run ", "run did not complete"),
)


def failure_class(problems: list[str]) -> str:
    """The first matching class of a failed task's problems (most telling first)."""
    for text, name in FAILURE_CLASSES:
        if any(text in p for p in problems):
            return name
    return "other"


def rows_of(server: Server) -> tuple[dict[str, dict[str, Any]], list[str]]:
    rows: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    if server.loopwright_json.is_file():
        data = json.loads(server.loopwright_json.read_text(encoding="utf-8"))
        rows["loopwright"] = {
            "summary": summarise(data["tasks"]),
            "tasks": data["tasks"],
            "threads": data.get("threads"),
        }
        if not data.get("complete", True):
            notes.append("loopwright: partial (the run was cut short)")
    if server.peers_json.is_file():
        data = json.loads(server.peers_json.read_text(encoding="utf-8"))
        for name, entry in data["results"].items():
            rows[name] = {
                "summary": summarise(entry["tasks"]),
                "tasks": entry["tasks"],
                "threads": entry.get("threads"),
            }
        if not data.get("complete", True):
            notes.append("peers: partial (the run was cut short; see task counts)")
    return rows, notes


def model_calls(outcome: dict[str, Any]) -> int | None:
    """Counted on the wire for the peers (bench/peers/counting_proxy.py); loopwright's
    report lists its calls; older results only have iterations or steps."""
    for key in ("model_calls", "prompt_tokens", "iterations", "steps"):
        value = outcome.get(key)
        if isinstance(value, list):
            return len(value)
        if isinstance(value, int):
            return value
    return None


def per_task_table(rows: dict[str, dict[str, Any]]) -> str:
    """Seconds, model calls and tokens per task (tokens where the framework reports them),
    and the failures by class."""
    heads = ["framework", "server threads", "s / task", "model calls / task", "tokens / task"]
    out = ["| " + " | ".join([*heads, "failures"]) + " |", "|---|---:|---:|---:|---:|---|"]
    for name, entry in rows.items():
        tasks = entry["tasks"]
        count = len(tasks) or 1
        seconds = sum(t["wall_s"] for t in tasks) / count
        calls = [model_calls(t) for t in tasks]
        known = [c for c in calls if isinstance(c, int)]
        tokens = [t["input_tokens"] + t["output_tokens"] for t in tasks if "input_tokens" in t]
        classes: dict[str, int] = {}
        for t in tasks:
            if not t["passed"]:
                kind = failure_class(t["problems"])
                classes[kind] = classes.get(kind, 0) + 1
        failures = ", ".join(f"{k} {v}" for k, v in sorted(classes.items(), key=lambda kv: -kv[1]))
        cells = [
            name,
            str(entry.get("threads") or "not recorded"),
            f"{seconds:.1f}",
            f"{sum(known) / len(known):.1f}" if known else "-",
            f"{sum(tokens) / len(tokens):,.0f}" if tokens else "-",
            failures or "none",
        ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def comparison(server: Server, levels: dict[int, str], task_ids: list[str]) -> str:
    """One server's section: a row per framework (overall, per level), the figures per task,
    then a per-task matrix."""
    rows, notes = rows_of(server)
    out = [f"### {server.label}", ""]
    if not rows:
        return "\n".join([*out, "Not run yet.", ""])
    out += [markdown_table(rows, levels), "", per_task_table(rows), *(f"\n**{n}**" for n in notes)]
    ids = [{t["id"] for t in e["tasks"]} for e in rows.values()]
    common = set.intersection(*ids) if ids else set()
    if any(len(e["tasks"]) > len(common) for e in rows.values()):
        subset = {
            name: {"summary": summarise([t for t in e["tasks"] if t["id"] in common])}
            for name, e in rows.items()
        }
        out += [
            "",
            f"On the {len(common)} tasks every framework ran (the same tasks for every row):",
            "",
            markdown_table(subset, levels),
        ]
    matrix = ["| task | " + " | ".join(rows) + " |", "|---|" + "---|" * len(rows)]
    for task_id in task_ids:
        cells = []
        for entry in rows.values():
            hit = next((t for t in entry["tasks"] if t["id"] == task_id), None)
            cells.append("-" if hit is None else ("pass" if hit["passed"] else "fail"))
        if any(c != "-" for c in cells):
            matrix.append(f"| {task_id} | " + " | ".join(cells) + " |")
    return "\n".join([*out, "", "Per task:", "", *matrix]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", default=",".join(SERVERS), help="comma-separated")
    parser.add_argument("--only", default="", help="comma-separated task ids")
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS), help="the peers to run")
    parser.add_argument("--timeout", type=float, default=120.0, help="per-task wall limit, s")
    parser.add_argument("--threads", type=int, default=default_threads())
    parser.add_argument("--skip-loopwright", action="store_true")
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--fresh", action="store_true", help="drop the kept outcomes, rerun")
    parser.add_argument("--tables-only", action="store_true", help="rebuild the table only")
    args = parser.parse_args()
    # `kill PID` stops the server too (the context manager's exit runs on SystemExit)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    suite = load_suite(ROOT / "evals")
    only = {i.strip() for i in args.only.split(",") if i.strip()}
    task_ids = [t.id for t in suite.tasks if not only or t.id in only]
    levels = {t.id: t.level for t in suite.tasks}
    unknown = [s for s in args.servers.split(",") if s not in SERVERS]
    if unknown:
        parser.error(f"unknown servers {unknown}; known: {', '.join(SERVERS)}")
    servers = [SERVERS[name] for name in args.servers.split(",")]
    RESULTS.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("OPENAI_API_KEY", "not-needed")
    for number, server in enumerate([] if args.tables_only else servers, 1):
        log = Path(tempfile.gettempdir()) / f"loopwright-eval-compare-{server.name}.log"
        print(f"server {number}/{len(servers)}: {server.label} (log: {log})", flush=True)
        with running(server, free_port(), args.threads, log) as url:
            if not args.skip_loopwright:
                run_loopwright(server, url, task_ids, levels, args)
            if not args.skip_peers:
                run_peers(server, url, args)
    legend = ", ".join(f"L{k} {v}" for k, v in sorted(suite.levels.items()))
    sections = [
        comparison(SERVERS[name], suite.levels, [t.id for t in suite.tasks]) for name in SERVERS
    ]
    stamp = f"Generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by bench/eval_compare.py."
    table = "\n".join([stamp, "", f"Levels: {legend}.", "", *sections])
    COMPARE_MD.write_text(table, encoding="utf-8")
    write_chart({s.label: rows_of(s)[0] for s in SERVERS.values()}, PEERS_PYTHON)
    write_block(table)
    print(table)
    print(f"written to {COMPARE_MD}, {PAGE.relative_to(ROOT)} and {CHART.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
