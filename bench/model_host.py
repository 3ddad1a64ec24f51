"""The embedded model on a real machine: the README's first command alone, beside a
CPU-bound process, beside a long-running model process, and two at once; the memory of
two at once; each call's phases; generation speed against llama.cpp's own loop.

    python bench/model_host.py                  # every scenario, once each
    python bench/model_host.py --tries 2        # the quiet command twice (and its median)
    python bench/model_host.py --before         # and the same as before the model host
    python bench/model_host.py --only alone,two

Every scenario runs in this one invocation, one after another, and is reported as a ratio
to the command alone (measured first), with the load average at its start. The README
command is `loopwright run "What is (123 + 456) * 7?" --model local --tools
examples/tools.py:add,examples/tools.py:multiply` (with --json, to read its calls), a fresh
process each time, with no model host running before it (the user's first command) unless
said. The model host gets a folder of its own and a warmed prompt cache (the system
message on disk, as after a user's first run); every host started is stopped at the end.

- beside a CPU-bound process: `python -c "while True: pass"` started just before;
- beside a long-running model process: a process asking the embedded model one question
  after another (an evaluation's calls: a 400-token system message, 48 tokens out), started
  first; the command starts once that process has had its first reply;
- two at once: two commands started together; resident memory (RSS, and PSS: shared pages
  divided among their users) of the two and the host, at their peak, against one alone;
- llama.cpp's own figure: llama-cpp-python's low-level loop (`eval`, `sample`) on the
  same weights and the same thread count as the command's calls, a fresh process;
- `--before`: each scenario as the embedded model ran before the model host (in each
  process, all the physical cores, libgomp's default spinning, no turn lock).

Results: bench/results/model-host.json, the tables in bench/results/model-host.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "model-host.json"
TABLES = ROOT / "bench" / "results" / "model-host.md"
CLI = str(Path(sys.executable).parent / "loopwright")
README = [
    CLI,
    "run",
    "What is (123 + 456) * 7?",
    "--model",
    "local",
    "--tools",
    "examples/tools.py:add,examples/tools.py:multiply",
    "--json",
]
PROMPT_TOKENS, GENERATED = 548, 50
"""llama.cpp's own loop: the README command's first prompt, then 50 tokens (as
bench/llama_speed.py)."""
SCENARIOS = ("alone", "warm", "in-process", "cpu", "model", "two", "speed")


@dataclass
class Run:
    seconds: float
    correct: bool
    calls: list[dict[str, Any]] = field(default_factory=list)
    load: float = 0.0


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def calls_of(stdout: str) -> list[dict[str, Any]]:
    """Each model call's tokens and phases, from the run's --json events."""
    calls = []
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        if event.get("type") != "model_response":
            continue
        usage, timings = event["response"]["usage"], event["response"].get("timings") or {}
        calls.append(
            {
                "seconds": round(event["duration_ms"] / 1000, 2),
                "prompt": usage.get("input_tokens", 0),
                "evaluated": usage.get("input_tokens", 0) - usage.get("cached_input_tokens", 0),
                "generated": usage.get("output_tokens", 0),
                **{k: round(v / 1000, 2) if k.endswith("_ms") else v for k, v in timings.items()},
            }
        )
    return calls


def start_readme(env: dict[str, str]) -> tuple[subprocess.Popen[str], float]:
    proc = subprocess.Popen(
        README, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return proc, time.perf_counter()


def finish_readme(proc: subprocess.Popen[str], started: float, load: float) -> Run:
    out, _err = proc.communicate()
    seconds = time.perf_counter() - started
    answer = next(
        (
            json.loads(line).get("answer") or ""
            for line in out.splitlines()
            if '"run_finished"' in line
        ),
        "",
    )
    return Run(round(seconds, 2), proc.returncode == 0 and "4053" in answer, calls_of(out), load)


def readme(env: dict[str, str]) -> Run:
    load = load_average()
    return finish_readme(*start_readme(env), load)


# --- memory -------------------------------------------------------------------------------


def _kb(pid: int, file: str, field_name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/{file}").read_text().splitlines():
            if line.startswith(field_name):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def host_pids(folder: Path) -> list[int]:
    pids = []
    for info in folder.glob("host-*.json"):
        try:
            pids.append(int(json.loads(info.read_text())["pid"]))
        except (OSError, ValueError, KeyError):
            continue
    return pids


class Memory:
    """The peak, over the processes given and the model hosts, of their RSS and PSS (MB)."""

    def __init__(self, folder: Path, pids: list[int]) -> None:
        self.folder, self.pids = folder, pids
        self.rss = self.pss = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(0.25):
            pids = set(self.pids) | set(host_pids(self.folder))
            self.rss = max(self.rss, sum(_kb(p, "status", "VmRSS:") for p in pids) / 1024)
            self.pss = max(self.pss, sum(_kb(p, "smaps_rollup", "Pss:") for p in pids) / 1024)

    def stop(self) -> dict[str, float]:
        self._done.set()
        self._thread.join()
        return {"rss_mb": round(self.rss), "pss_mb": round(self.pss)}


# --- settings -----------------------------------------------------------------------------


def environments(work: Path, before: bool) -> dict[str, dict[str, str]]:
    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("LOOPWRIGHT_", "OMP_", "GOMP_"))
    }
    base.update(
        LOOPWRIGHT_STORE=str(work / "runs.db"), LOOPWRIGHT_PROMPT_CACHE=str(work / "prompts")
    )
    hosted = {
        **base,
        "LOOPWRIGHT_MODEL_HOST_DIR": str(work / "host"),
        "LOOPWRIGHT_MODEL_HOST_IDLE": "600",
    }
    settings = {"hosted": hosted, "in-process": {**hosted, "LOOPWRIGHT_MODEL_HOST": "off"}}
    if before:  # every core, libgomp's default spin, no shared folder (so no turn lock)
        settings["before"] = {
            **base,
            "LOOPWRIGHT_MODEL_HOST": "off",
            "GOMP_SPINCOUNT": "300000",
            "LOOPWRIGHT_LOCAL_THREADS": str(os.cpu_count() or 1),
            "LOOPWRIGHT_MODEL_HOST_DIR": "/proc/no-model-host",
        }
    return settings


def stop_hosts(env: dict[str, str]) -> None:
    if "LOOPWRIGHT_MODEL_HOST_DIR" in env and env.get("LOOPWRIGHT_MODEL_HOST") != "off":
        subprocess.run([CLI, "model-host", "stop"], env=env, capture_output=True, check=False)


def started_beside(
    command: list[str], env: dict[str, str], ready: str = ""
) -> subprocess.Popen[str]:
    """A process beside the command; waits until it printed `ready` (a line starting so)."""
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    while ready and proc.stdout is not None:
        line = proc.stdout.readline()
        if not line or line.startswith(ready):
            break
    return proc


def end(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()


# --- the scenarios ------------------------------------------------------------------------


def scenario(name: str, env: dict[str, str], folder: Path) -> dict[str, Any]:
    stop_hosts(env)
    if name in ("alone", "in-process", "warm"):
        if name == "warm":
            readme(env)  # the host is up after it: the next command finds it loaded
        proc, started = start_readme(env)
        memory = Memory(folder, [proc.pid])
        run = finish_readme(proc, started, load_average())
        return {"runs": [run.__dict__], "memory": memory.stop()}
    if name == "cpu":
        burner = started_beside([sys.executable, "-c", "while True: pass"], env)
        try:
            return {"runs": [readme(env).__dict__]}
        finally:
            end(burner)
    if name == "model":
        neighbour = started_beside([sys.executable, __file__, "--neighbour"], env, "reply")
        try:
            return {"runs": [readme(env).__dict__]}
        finally:
            end(neighbour)
    return two_at_once(env, folder)


def two_at_once(env: dict[str, str], folder: Path) -> dict[str, Any]:
    """Two commands started together, each timed to its own end; their memory."""
    load = load_average()
    commands = [start_readme(env), start_readme(env)]
    memory = Memory(folder, [proc.pid for proc, _ in commands])
    runs: list[Run] = [Run(0.0, False), Run(0.0, False)]

    def wait(index: int) -> None:
        runs[index] = finish_readme(*commands[index], load)

    waiters = [threading.Thread(target=wait, args=(i,)) for i in range(2)]
    for waiter in waiters:
        waiter.start()
    for waiter in waiters:
        waiter.join()
    return {"runs": [r.__dict__ for r in runs], "memory": memory.stop()}


def neighbour() -> None:
    """The long-running model process: one question after another, forever."""
    import asyncio

    from loopwright.messages import Message, ModelRequest
    from loopwright.models import resolve_model

    system = Message.system(" ".join(f"Rule {i}: answer with the number only." for i in range(40)))
    model = resolve_model("local")

    async def ask_forever() -> None:
        for index in range(1_000_000):
            question = Message.user(f"Question {index}: what is {index} * {index + 7}?")
            request = ModelRequest(
                messages=(system, question), temperature=0.0, max_output_tokens=48
            )
            await model.complete(request)
            print(f"reply {index}", flush=True)

    asyncio.run(ask_forever())


def llama_loop(threads: int) -> float:
    """llama.cpp's own generation speed here: llama-cpp-python's low-level loop (tokens/s)."""
    from llama_cpp import Llama

    from loopwright.models._local import chosen_cpu_buffers, resolve_local_path

    with chosen_cpu_buffers():
        llm = Llama(
            str(resolve_local_path("")),
            n_ctx=2048,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
    tokens = llm.tokenize((ROOT / "README.md").read_text(encoding="utf-8").encode())
    llm.eval(tokens[:PROMPT_TOKENS])
    started = time.perf_counter()
    for _ in range(GENERATED):
        llm.eval([llm.sample(temp=0.0)])
    return float(GENERATED / (time.perf_counter() - started))


def speed(report: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """Generation tokens/s of the quiet command's calls against llama.cpp's own loop with
    the same thread count (the one most of its calls used)."""
    calls = [c for r in report.get("alone", {}).get("runs", []) for c in r["calls"]]
    threads = statistics.mode([c.get("threads", 1) for c in calls]) if calls else 1
    ours = sum(c["generated"] for c in calls) / max(
        1e-9, sum(c.get("generate_ms", 0) for c in calls)
    )
    load = load_average()
    done = subprocess.run(
        [sys.executable, __file__, "--llama-loop", str(threads)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = float(done.stdout.strip().splitlines()[-1])
    return {"threads": threads, "ours": round(ours, 2), "llama": round(theirs, 2), "load": load}


# --- the report ---------------------------------------------------------------------------

LABELS = {
    "alone": ("the command alone, no host running (quiet)", "<= 12 s"),
    "warm": ("the command alone, the host already running", ""),
    "in-process": ("the command alone, in its own process (LOOPWRIGHT_MODEL_HOST=off)", ""),
    "cpu": ("beside a CPU-bound process", "<= 2x"),
    "model": ("beside a long-running model process", "<= 2x"),
    "two": ("two started at once (each)", "<= 2.2x"),
}


def seconds_of(entry: dict[str, Any]) -> list[float]:
    return [run["seconds"] for run in entry["runs"]]


def table(report: dict[str, Any]) -> list[str]:
    quiet = statistics.median(seconds_of(report["alone"])) if "alone" in report else 0.0
    lines = [
        "| scenario | seconds | vs alone | goal | all 4053 | load (1 min) at start |",
        "| --- | ---: | ---: | --- | --- | ---: |",
    ]
    for name, entry in report.items():
        if name in ("speed", "machine"):
            continue
        label, goal = LABELS.get(name.removeprefix("before "), (name, ""))
        if name.startswith("before "):
            label, goal = f"before the model host: {label}", ""
        times = seconds_of(entry)
        ratios = ", ".join(f"{t / quiet:.2f}x" for t in times) if quiet else ""
        correct = all(run["correct"] for run in entry["runs"])
        loads = ", ".join(f"{run['load']:.1f}" for run in entry["runs"])
        shown = ", ".join(f"{t:.1f}" for t in times)
        lines.append(f"| {label} | {shown} | {ratios} | {goal} | {correct} | {loads} |")
    lines += memory_lines(report) + phase_lines(report) + speed_lines(report)
    return lines


def memory_lines(report: dict[str, Any]) -> list[str]:
    if "alone" not in report or "two" not in report:
        return []
    one, two = report["alone"]["memory"], report["two"]["memory"]
    return [
        "",
        "| resident memory, peak (commands and host) | one alone | two at once | ratio | goal |",
        "| --- | ---: | ---: | ---: | --- |",
        *(
            f"| {kind} | {one[key]:,} MB | {two[key]:,} MB | "
            f"{two[key] / max(1, one[key]):.2f}x | <= 1.3x |"
            for kind, key in (("RSS", "rss_mb"), ("PSS", "pss_mb"))
        ),
    ]


def phase_lines(report: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "| scenario | call | load s | wait s | prompt s (evaluated/all) | generate s (tokens) "
        "| threads |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, entry in report.items():
        if name in ("speed", "machine"):
            continue
        for run in entry["runs"][:1]:
            for number, call in enumerate(run["calls"], 1):
                get = call.get
                lines.append(
                    f"| {name} | {number} | {get('load_ms', 0):.2f} | {get('wait_ms', 0):.2f} | "
                    f"{get('prompt_ms', 0):.2f} ({call['evaluated']}/{call['prompt']}) | "
                    f"{get('generate_ms', 0):.2f} ({call['generated']}) | {get('threads', '')} |"
                )
    return lines


def speed_lines(report: dict[str, Any]) -> list[str]:
    if "speed" not in report:
        return []
    s = report["speed"]
    return [
        "",
        f"generation, the command's calls alone: {s['ours']:.2f} tokens/s; llama.cpp's own "
        f"loop, same weights, {s['threads']} thread(s): {s['llama']:.2f} tokens/s; ratio "
        f"{s['ours'] / max(1e-9, s['llama']):.2f} (goal >= 0.90); load {s['load']:.1f}",
    ]


def machine() -> dict[str, Any]:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    return {
        "cpu": model,
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
    }


def run_all(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    settings = environments(work, args.before)
    hosted, folder = settings["hosted"], work / "host"
    chosen = [s for s in SCENARIOS if not args.only or s in args.only.split(",")]
    report: dict[str, Any] = {"machine": machine()}
    warm = readme(hosted)  # the system message goes to the prompt cache on disk
    print(f"warm-up {warm.seconds:.1f} s, correct {warm.correct}, load {warm.load}", flush=True)
    try:
        for name in chosen:
            if name == "speed":
                continue
            env = settings["in-process"] if name == "in-process" else hosted
            tries = [
                scenario(name, env, folder) for _ in range(args.tries if name == "alone" else 1)
            ]
            report[name] = {
                "runs": [r for t in tries for r in t["runs"]],
                **({"memory": tries[-1]["memory"]} if "memory" in tries[-1] else {}),
            }
            print(f"{name}: {seconds_of(report[name])} s, load {load_average()}", flush=True)
        for name in [n for n in ("alone", "cpu", "model", "two") if n in chosen and args.before]:
            report[f"before {name}"] = scenario(name, settings["before"], folder)
            print(f"before {name}: {seconds_of(report[f'before {name}'])} s", flush=True)
        if "speed" in chosen:
            report["speed"] = speed(report, hosted)
    finally:
        stop_hosts(hosted)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=1, help="the quiet command's tries")
    parser.add_argument("--only", default="", help=f"some of: {','.join(SCENARIOS)}")
    parser.add_argument("--before", action="store_true", help="also as before the model host")
    parser.add_argument("--neighbour", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--llama-loop", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.neighbour:
        neighbour()
        return
    if args.llama_loop:
        print(f"{llama_loop(args.llama_loop):.3f}")
        return
    with tempfile.TemporaryDirectory(prefix="lw-host-") as tmp:
        report = run_all(args, Path(tmp))
    machine_line = ", ".join(f"{k}: {v}" for k, v in report["machine"].items())
    text = "\n".join([*table(report), "", machine_line])
    print("\n" + text)
    RESULTS.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    TABLES.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
