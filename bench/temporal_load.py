"""Throughput of the Temporal engine at a given model latency, and where its CPU goes.

Used by bench/temporal.py. The model is bench/latency_provider.py (an OpenAI-compatible
endpoint on loopback that answers after a fixed latency) in a process of its own; each run
is `steps` model calls and `steps - 1` echo tool calls. For 1, 2 and 4 `loopwright worker`
processes, `per_worker` runs per worker start at once; runs/s is their count over the wall
time from the first start to the last result. Meanwhile every process's CPU is read from
/proc (the Temporal server, the workers and their threads, PostgreSQL with its backends,
the provider, this process), and the machine's total, so what the others on the machine
used is known too.
"""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proc_cpu import cpu_s, load_average, machine_busy_s, threads_cpu_s

from loopwright.agent import AgentOptions
from loopwright.engines.temporal import connect, run_worker
from loopwright.engines.temporal._client import start_agent_run
from loopwright.runtime import RunSpec, Runtime
from loopwright.store import open_store

ROOT = Path(__file__).resolve().parents[1]


def start_provider(latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, str(ROOT / "bench" / "latency_provider.py"),
               "--latency-ms", str(latency_ms)]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = proc.stdout.readline().split()[1]
    return proc, f"http://127.0.0.1:{port}/v1"


def latency_spec(base_url: str, steps: int) -> RunSpec:
    options = AgentOptions(max_iterations=steps + 1, repetition_threshold=steps + 1)
    return RunSpec(request=f"echo {steps}", model="openai:bench", base_url=base_url,
                   tools=("echo",), options=options)  # fmt: skip


def worker_command(address: str, url: str, queue: str) -> list[str]:
    return [sys.executable, "-m", "loopwright", "worker", "--temporal", address, "--store",
            url, "--task-queue", queue]  # fmt: skip


class ProfiledWorker:
    """A worker in a thread of this process (its own event loop), its thread profiled with
    cProfile between `enable()` and `disable()` (the thread only: not the client's)."""

    def __init__(self, address: str, url: str, queue: str) -> None:
        self.profiler = cProfile.Profile()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(address, url, queue),))
        self._thread.start()
        self._ready.wait(60)

    async def _main(self, address: str, url: str, queue: str) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        client = await connect(address)
        self._ready.set()
        await run_worker(client, url, task_queue=queue, stop=self._stop)

    def _in_thread(self, call: Any) -> None:
        done = threading.Event()

        def run() -> None:
            call()
            done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(10)

    def enable(self) -> None:
        self._in_thread(self.profiler.enable)

    def disable(self) -> None:
        self._in_thread(self.profiler.disable)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(60)


@dataclass
class Meter:
    """CPU seconds of named processes between `start()` and `stop()`."""

    pids: dict[str, list[int]]
    reaping: set[str] = field(default_factory=set)
    """Names whose processes' children count too (PostgreSQL's backends)."""
    used: dict[str, float] = field(default_factory=dict)
    threads: dict[str, float] = field(default_factory=dict)
    machine_s: float = 0.0
    wall_s: float = 0.0

    def _read(self) -> dict[str, float]:
        return {name: sum(cpu_s(p, with_children=name in self.reaping) for p in pids)
                for name, pids in self.pids.items()}  # fmt: skip

    def _threads(self) -> dict[str, float]:
        total: dict[str, float] = {}
        for pid in self.pids.get("workers", []):
            for name, used in threads_cpu_s(pid).items():
                total[name] = total.get(name, 0.0) + used
        return total

    def start(self) -> None:
        self._before, self._threads_before = self._read(), self._threads()
        self._machine, self._wall = machine_busy_s(), time.perf_counter()
        self._self = time.process_time()

    def stop(self) -> None:
        self.wall_s = time.perf_counter() - self._wall
        after = self._read()
        self.used = {name: after[name] - self._before[name] for name in after}
        self.used["bench client"] = time.process_time() - self._self
        before = self._threads_before
        self.threads = {k: v - before.get(k, 0.0) for k, v in self._threads().items()}
        self.machine_s = machine_busy_s() - self._machine

    def shares(self) -> dict[str, float]:
        """Each one's CPU as a share of one core over the wall time; `others`: the rest
        of the machine's busy time (other people's processes)."""
        rows = {name: used / self.wall_s for name, used in self.used.items()}
        rows["others on the machine"] = max(0.0, self.machine_s - sum(self.used.values()))
        rows["others on the machine"] /= self.wall_s
        return rows


async def run_all(address: str, queue: str, runs: list[RunSpec]) -> float:
    client = await connect(address)
    started = time.perf_counter()
    handles = await asyncio.gather(*(start_agent_run(client, r, task_queue=queue) for r in runs))
    outcomes = await asyncio.gather(*(h.result() for h in handles))
    elapsed = time.perf_counter() - started
    assert all(o["status"] == "completed" for o in outcomes), outcomes
    return elapsed


async def embedded_rate(url: str, run: RunSpec, count: int) -> float:
    """`count` runs at once on the embedded engine (one process, the same Postgres store)."""
    store = open_store(url)
    runtime = Runtime(store)
    try:
        await runtime.start(run).wait()  # warm-up
        started = time.perf_counter()
        results = await asyncio.gather(*(runtime.start(run).wait() for _ in range(count)))
        elapsed = time.perf_counter() - started
    finally:
        runtime.close()
        store.close()
    assert all(r.status == "completed" for r in results)
    return count / elapsed


def stop(procs: list[subprocess.Popen[Any]]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        proc.wait(timeout=60)


async def workers_row(ctx: dict[str, Any], count: int, per_worker: int) -> dict[str, Any]:
    """`count` workers, `count * per_worker` runs at once: runs/s and the CPU shares."""
    queue = f"load{count}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = worker_command(ctx["address"], ctx["url"], queue)
    procs = [subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL) for _ in range(count)]
    try:
        await run_all(ctx["address"], queue, [ctx["spec"]] * count)  # warm-up
        pids = {**ctx["pids"], "workers": [p.pid for p in procs]}
        meter = Meter(pids, reaping={"postgres"})
        load_before = load_average()
        meter.start()
        await run_all(ctx["address"], queue, [ctx["spec"]] * (count * per_worker))
        meter.stop()
    finally:
        stop(procs)
    return {
        "workers": count,
        "runs": count * per_worker,
        "wall_s": meter.wall_s,
        "runs_per_s": count * per_worker / meter.wall_s,
        "cpu_cores": meter.shares(),
        "worker_threads_cores": {k: v / meter.wall_s for k, v in meter.threads.items() if v},
        "load_average": [load_before, load_average()],
    }


async def profiled_row(ctx: dict[str, Any], per_worker: int) -> dict[str, Any]:
    """One worker in this process, its event loop thread under cProfile while
    `per_worker` runs execute."""
    worker = ProfiledWorker(ctx["address"], ctx["url"], "profiled")
    try:
        await run_all(ctx["address"], "profiled", [ctx["spec"]])  # warm-up
        worker.enable()
        elapsed = await run_all(ctx["address"], "profiled", [ctx["spec"]] * per_worker)
        worker.disable()
    finally:
        worker.stop()
    return {"runs_per_s": per_worker / elapsed, **profile_summary(worker.profiler)}


def profile_summary(profiler: cProfile.Profile, top: int = 12) -> dict[str, Any]:
    """A worker's event loop thread: own time by package (waiting in epoll apart), and
    the top functions by own time."""
    raw: dict[Any, Any] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    by_package: Counter[str] = Counter()
    rows = []
    for (file, line, name), (_, _, tottime, cumtime, _) in raw.items():
        if "epoll" in name:
            by_package["(idle: waiting in epoll)"] += tottime
            continue
        by_package[_package(file, name)] += tottime
        rows.append((tottime, cumtime, f"{_package(file, name)}:{Path(file).name}:{line}({name})"))
    rows.sort(reverse=True)
    total = sum(by_package.values()) or 1.0
    return {
        "own_time_share": {k: v / total for k, v in by_package.most_common(9)},
        "top": [{"own_s": t, "cum_s": c, "function": f} for t, c, f in rows[:top]],
    }


def _package(file: str, name: str) -> str:
    if "WorkerRef" in name or "ClientRef" in name:
        return "temporalio core (Rust, called from Python)"
    for name in ("temporalio", "psycopg", "loopwright", "httpx", "httpcore", "google",
                 "asyncio", "json", "pydantic"):  # fmt: skip
        if f"/{name}/" in file:
            return name
    return "builtins" if file == "~" else "other"


async def load_rows(
    address: str, url: str, pids: dict[str, list[int]], latency_ms: float, per_worker: int,
    worker_counts: tuple[int, ...], profile: bool, steps: int = 5,
) -> dict[str, Any]:  # fmt: skip
    provider, base_url = start_provider(latency_ms)
    try:
        spec = latency_spec(base_url, steps)
        ctx = {"address": address, "url": url, "spec": spec,
               "pids": {**pids, "provider": [provider.pid]}}  # fmt: skip
        result: dict[str, Any] = {"latency_ms": latency_ms, "steps": steps}
        result["embedded_runs_per_s"] = await embedded_rate(url, spec, per_worker)
        result["rows"] = [await workers_row(ctx, n, per_worker) for n in worker_counts]
        if profile:
            result["profiled"] = await profiled_row(ctx, per_worker)
        return result
    finally:
        stop([provider])
