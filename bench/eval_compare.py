"""The tool-use evaluation suite, the same model, loopwright vs peers: one comparison table.

    .venv/bin/python bench/eval_compare.py [--only ID,ID] [--frameworks smolagents,...]

Starts llama.cpp's OpenAI-compatible server once on 127.0.0.1 with the embedded model
(Qwen2.5-Coder-1.5B-Instruct Q4_K_M), then, against that one server:
- loopwright: `loopwright eval evals/ --model openai:qwen --base-url URL --only TASK`, one
  process per task with the same wall-clock limit the peers get; merged into
  bench/results/eval-loopwright-server.json;
- the peers: bench/peers/eval_peers.py under bench/.venv-peers (bench/results/eval-peers.json);
and writes the table to bench/results/eval-compare.md (and prints it).

`--tables-only` rebuilds the table from the JSON files already written (no server, no runs).
CPU heavy: a model call takes seconds on two cores, and the full suite through four
frameworks takes hours; it runs one task at a time.
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
from eval_peers import markdown_table, summarise, wait_for_idle_server  # noqa: E402

RESULTS = ROOT / "bench" / "results"
LOOPWRIGHT_JSON = RESULTS / "eval-loopwright-server.json"
PEERS_JSON = RESULTS / "eval-peers.json"
COMPARE_MD = RESULTS / "eval-compare.md"
PEERS_PYTHON = ROOT / "bench" / ".venv-peers" / "bin" / "python"
LOOPWRIGHT = Path(sys.executable).parent / "loopwright"
SERVER_START_LIMIT_S = 300


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def llama_server(port: int, threads: int, log: Path) -> Iterator[str]:
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(resolve_local_path("")),
        "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", str(threads), "--n_ctx", "8192",
    ]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + SERVER_START_LIMIT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited with {process.returncode}; see {log}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"llama.cpp server did not answer within {SERVER_START_LIMIT_S}s"
                )
            time.sleep(0.5)  # polling a condition with a deadline
        yield url
    finally:
        process.terminate()  # uvicorn waits for a request in progress; do not wait for long
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_loopwright(url: str, task_ids: list[str], levels: dict[str, int], timeout: float) -> None:
    """One `loopwright eval --only TASK` per task, each with the same wall limit as a peer's."""
    outcomes: list[dict[str, Any]] = []
    pace = ProgressClock(len(task_ids), unit="tasks")
    with tempfile.TemporaryDirectory(prefix="eval-compare-") as tmp:
        for task_id in task_ids:
            report = Path(tmp) / f"{task_id}.json"
            command = [
                str(LOOPWRIGHT), "eval", str(ROOT / "evals"), "--model", "openai:qwen",
                "--base-url", url, "--only", task_id, "--report", str(report),
            ]  # fmt: skip
            started = time.perf_counter()
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
                if done.returncode == 0 and report.is_file():
                    outcome = json.loads(report.read_text(encoding="utf-8"))["tasks"][0]
                else:
                    outcome = failed(task_id, levels, started, done.stderr.strip()[-400:])
            except subprocess.TimeoutExpired:
                outcome = failed(task_id, levels, started, f"timed out after {timeout:g}s")
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
            write_loopwright_report(outcomes, url, timeout, complete=False)
    write_loopwright_report(outcomes, url, timeout, complete=True)


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
    outcomes: list[dict[str, Any]], url: str, timeout: float, *, complete: bool
) -> None:
    report = {
        "model": "openai:qwen",
        "base_url": url,
        "timeout_s": timeout,
        "complete": complete,
        "summary": summarise(outcomes),
        "tasks": outcomes,
    }
    LOOPWRIGHT_JSON.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def run_peers(url: str, only: str, frameworks: str, timeout: float, resume: bool) -> None:
    if not PEERS_PYTHON.is_file():
        raise SystemExit(
            "no bench/.venv-peers: python3 -m venv bench/.venv-peers && "
            "bench/.venv-peers/bin/pip install -r bench/peers/requirements.txt && "
            "bench/.venv-peers/bin/pip install -e . --no-deps"
        )
    command = [
        str(PEERS_PYTHON), str(ROOT / "bench" / "peers" / "eval_peers.py"),
        "--base-url", url, "--frameworks", frameworks, "--timeout", str(timeout),
        "--out", str(PEERS_JSON),
    ]  # fmt: skip
    if only:
        command += ["--only", only]
    if resume:
        command.append("--resume")
    subprocess.run(command, check=True)


def comparison(levels: dict[int, str], task_ids: list[str]) -> str:
    """The markdown: one row per framework (overall, per level), then a per-task matrix."""
    rows: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    if LOOPWRIGHT_JSON.is_file():
        data = json.loads(LOOPWRIGHT_JSON.read_text(encoding="utf-8"))
        rows["loopwright"] = {"summary": summarise(data["tasks"]), "tasks": data["tasks"]}
        if not data.get("complete", True):
            notes.append("loopwright: partial (the run was cut short)")
    if PEERS_JSON.is_file():
        data = json.loads(PEERS_JSON.read_text(encoding="utf-8"))
        for name, entry in data["results"].items():
            rows[name] = {"summary": summarise(entry["tasks"]), "tasks": entry["tasks"]}
        if not data.get("complete", True):
            notes.append("peers: partial (the run was cut short; see task counts)")
    legend = ", ".join(f"L{k} {v}" for k, v in sorted(levels.items()))
    out = [
        f"Generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by bench/eval_compare.py.",
        "",
        markdown_table(rows, levels),
        "",
        f"Levels: {legend}.",
        *(f"\n**{n}**" for n in notes),
    ]
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
    parser.add_argument("--only", default="", help="comma-separated task ids")
    parser.add_argument("--frameworks", default="smolagents,pydantic_ai,langgraph")
    parser.add_argument("--timeout", type=float, default=120.0, help="per-task wall limit, s")
    parser.add_argument("--threads", type=int, default=default_threads())
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--skip-loopwright", action="store_true")
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--resume", action="store_true", help="peers: keep finished tasks")
    parser.add_argument("--tables-only", action="store_true", help="rebuild the table only")
    args = parser.parse_args()
    # `kill PID` stops the server too (the context manager's exit runs on SystemExit)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    suite = load_suite(ROOT / "evals")
    only = {i.strip() for i in args.only.split(",") if i.strip()}
    task_ids = [t.id for t in suite.tasks if not only or t.id in only]
    levels = {t.id: t.level for t in suite.tasks}
    RESULTS.mkdir(parents=True, exist_ok=True)
    if not args.tables_only:
        log = Path(tempfile.gettempdir()) / "loopwright-eval-compare-server.log"
        os.environ.setdefault("OPENAI_API_KEY", "not-needed")
        with llama_server(args.port or free_port(), args.threads, log) as url:
            print(f"llama.cpp server at {url} (log: {log})", flush=True)
            if not args.skip_loopwright:
                run_loopwright(url, task_ids, levels, args.timeout)
            if not args.skip_peers:
                run_peers(url, args.only, args.frameworks, args.timeout, args.resume)
    table = comparison(suite.levels, [t.id for t in suite.tasks])
    COMPARE_MD.write_text(table, encoding="utf-8")
    print(table)
    print(f"written to {COMPARE_MD}")


if __name__ == "__main__":
    main()
