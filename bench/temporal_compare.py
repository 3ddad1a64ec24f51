"""Temporal throughput of two source trees, alternated in one invocation, with what each
run costs: CPU seconds a run per process, the run's history (activities, workflow tasks,
payloads) and the database statements a run makes.

A busy machine makes runs/s alone a poor comparison, so each tree's rounds alternate with
the other's (A B, then B A, ...) on one Temporal dev server and one PostgreSQL (a database
per tree, migrated by its own code), and the CPU each process used is read from /proc.

Each tree runs with its own Python (`TREE/.venv/bin/python`, or --python-of TREE=PYTHON)
and its own `src/` first on the path: its workers (`loopwright worker`), and a child of
this script that starts its runs (its own client). A run is the scripted 5-step agent run
of bench/temporal.py (a zero-latency ScriptedModel calling echo 4 times, then answering),
`per_worker` runs per worker started at once.

    python bench/temporal_compare.py --tree /work/wt/speed-old --tree . --rounds 3
    python bench/temporal_compare.py --tree . --rounds 1 --profile /tmp/p  # py-spy (pip install)
    python bench/temporal_compare.py --tree . --rounds 0 --cprofile /tmp/p  # cProfile, 1 worker
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
STEPS = 5


def script(folder: Path, steps: int) -> Path:
    replies = [
        json.dumps({"action": "echo", "action_input": {"text": f"step {i}"}})
        for i in range(steps - 1)
    ]
    replies.append(json.dumps({"final_answer": "done"}))
    path = folder / f"script_{steps}.json"
    path.write_text(json.dumps(replies))
    return path


# ---- the child: runs inside the tree measured (its Python, its src/ first on the path) ----


def _history_counts(history: Any) -> dict[str, Any]:
    """Events by type in a run's history, activities by name, payload count and bytes."""
    from google.protobuf.message import Message as Proto
    from temporalio.api.common.v1 import Payload

    kinds: Counter[str] = Counter()
    activities: Counter[str] = Counter()
    payloads = [0, 0]

    def walk(message: Proto) -> None:
        if isinstance(message, Payload):
            payloads[0] += 1
            payloads[1] += message.ByteSize()
            return
        for field, value in message.ListFields():
            if field.message_type is None:
                continue
            if isinstance(value, Proto):
                walk(value)
                continue
            items = value.values() if hasattr(value, "values") else value  # a map, a list
            for item in items:
                if isinstance(item, Proto):
                    walk(item)

    for event in history.events:
        kind = event.WhichOneof("attributes") or "?"
        kinds[kind.removesuffix("_event_attributes")] += 1
        if kind == "activity_task_scheduled_event_attributes":
            activities[event.activity_task_scheduled_event_attributes.activity_type.name] += 1
        walk(event)
    size = sum(e.ByteSize() for e in history.events)
    return {"events": dict(kinds), "activities": dict(activities), "payloads": payloads[0],
            "payload_bytes": payloads[1], "history_bytes": size}  # fmt: skip


def _statements(url: str) -> dict[str, int]:
    import psycopg

    sql = ("SELECT query, calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
           "WHERE d.datname = current_database()")  # fmt: skip
    with psycopg.connect(url, autocommit=True) as conn:
        return {q: int(c) for q, c in conn.execute(sql).fetchall()}


def _reset_statements(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")


def _xacts(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database "
            "WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


def _spec(path: Path) -> Any:
    from loopwright.agent import AgentOptions
    from loopwright.runtime import RunSpec

    options = AgentOptions(max_iterations=STEPS + 1, repetition_threshold=STEPS + 1)
    return RunSpec(request="echo", model=f"scripted:{path}", tools=("echo",), options=options)


async def _run_all(address: str, queue: str, specs: list[Any]) -> tuple[float, list[str]]:
    from loopwright.engines.temporal import connect

    try:
        from loopwright.engines.temporal._client import start_agent_run
    except ImportError:  # an older tree
        from loopwright.engines.temporal import start_agent_run  # type: ignore[attr-defined,no-redef]

    client = await connect(address)
    started = time.perf_counter()
    handles = await asyncio.gather(*(start_agent_run(client, s, task_queue=queue) for s in specs))
    outcomes = await asyncio.gather(*(h.result() for h in handles))
    elapsed = time.perf_counter() - started
    assert all(o["status"] == "completed" for o in outcomes), outcomes
    return elapsed, [h.id for h in handles]


async def _history(address: str, workflow_id: str) -> Any:
    from loopwright.engines.temporal import connect

    client = await connect(address)
    return await client.get_workflow_handle(workflow_id).fetch_history()


class InThreadWorker:
    """A worker in a thread of this process (its own event loop), that thread under
    cProfile while the measured runs execute (--cprofile)."""

    def __init__(self, address: str, url: str, queue: str) -> None:
        import cProfile
        import threading

        self.profiler = cProfile.Profile()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(address, url, queue),))
        self._thread.start()
        self._ready.wait(60)

    async def _main(self, address: str, url: str, queue: str) -> None:
        from loopwright.engines.temporal import connect, run_worker

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        client = await connect(address)
        self._ready.set()
        await run_worker(client, url, task_queue=queue, stop=self._stop)

    def in_thread(self, call: Any) -> None:
        import threading

        done = threading.Event()

        def run() -> None:
            call()
            done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(10)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(60)


def profiled(args: argparse.Namespace) -> None:
    """--cprofile: one worker in this process, its loop thread profiled over the runs."""
    spec = _spec(Path(args.script))
    worker = InThreadWorker(args.address, args.url, args.queue)
    try:
        asyncio.run(_run_all(args.address, args.queue, [spec]))  # warm-up
        worker.in_thread(worker.profiler.enable)
        started = time.process_time()
        wall, _ = asyncio.run(_run_all(args.address, args.queue, [spec] * args.per_worker))
        worker.in_thread(worker.profiler.disable)
        used = time.process_time() - started
    finally:
        worker.stop()
    worker.profiler.dump_stats(args.cprofile)
    print(json.dumps({"runs": args.per_worker, "wall_s": wall, "process_cpu_s": used}))


def child(args: argparse.Namespace) -> None:
    if args.cprofile:
        profiled(args)
        return
    from proc_cpu import cpu_s, machine_busy_s, threads_cpu_s

    tree = Path(args.tree[0]).resolve()
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    command = [sys.executable, "-m", "loopwright", "worker", "--temporal", args.address,
               "--store", args.url, "--task-queue", args.queue]  # fmt: skip
    procs = [subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for _ in range(args.workers)]  # fmt: skip
    spy = None
    spec = _spec(Path(args.script))
    runs = args.workers * args.per_worker
    try:
        asyncio.run(_run_all(args.address, args.queue, [spec] * args.workers))  # warm-up
        if args.profile:
            spy_command = [str(Path(sys.executable).parent / "py-spy"), "record", "--pid",
                           str(procs[0].pid), "--rate", "200", "--format", "raw", "--threads",
                           "-o", args.profile, "--nonblocking"]  # fmt: skip
            spy = subprocess.Popen(
                spy_command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            time.sleep(1.0)
        _reset_statements(args.url)
        xacts = _xacts(args.url)
        pids = {"workers": [p.pid for p in procs], "server": [args.server_pid],
                "postgres": [args.postgres_pid]}  # fmt: skip

        def read() -> dict[str, float]:
            return {name: sum(cpu_s(p, with_children=name == "postgres") for p in ps)
                    for name, ps in pids.items()}  # fmt: skip

        threads_before = [threads_cpu_s(p.pid) for p in procs]
        before, machine, mine = read(), machine_busy_s(), time.process_time()
        wall, ids = asyncio.run(_run_all(args.address, args.queue, [spec] * runs))
        after = read()
        used = {k: after[k] - before[k] for k in after}
        used["client"] = time.process_time() - mine
        used["others on the machine"] = max(0.0, machine_busy_s() - machine - sum(used.values()))
        threads: dict[str, float] = {}
        for proc, was in zip(procs, threads_before, strict=True):
            for name, now in threads_cpu_s(proc.pid).items():
                threads[name] = threads.get(name, 0.0) + now - was.get(name, 0.0)
        statements = _statements(args.url)
        xacts = _xacts(args.url) - xacts
        history = _history_counts(asyncio.run(_history(args.address, ids[-1])))
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(60)
    top = sorted(statements.items(), key=lambda kv: -kv[1])
    print(json.dumps({
        "workers": args.workers, "runs": runs, "wall_s": wall, "runs_per_s": runs / wall,
        "cpu_ms_per_run": {k: v / runs * 1000 for k, v in used.items()},
        "worker_threads_ms_per_run": {k: v / runs * 1000 for k, v in threads.items() if v},
        "statements_per_run": sum(statements.values()) / runs,
        "transactions_per_run": xacts / runs,
        "top_statements": [(q[:160], c / runs) for q, c in top[:25]],
        "history": history,
    }))  # fmt: skip


# ---- the parent: one server and one Postgres, the trees' rounds alternated ----


def python_of(tree: Path, given: dict[str, str]) -> str:
    return given.get(str(tree), str(tree / ".venv" / "bin" / "python"))


def one_round(
    ctx: dict[str, Any], tree: Path, workers: int, queue: str, profile: str, cprofile: str = ""
) -> Any:
    command = [python_of(tree, ctx["pythons"]), str(BENCH / "temporal_compare.py"), "--child",
               "--tree", str(tree), "--address", ctx["address"], "--url", ctx["urls"][tree],
               "--queue", queue, "--workers", str(workers), "--per-worker",
               str(ctx["per_worker"]), "--script", str(ctx["script"]), "--server-pid",
               str(ctx["server_pid"]), "--postgres-pid", str(ctx["postgres_pid"])]  # fmt: skip
    if profile:
        command += ["--profile", profile]
    if cprofile:
        command += ["--cprofile", cprofile]
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}:{BENCH}"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{tree} {workers} workers failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def parent(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from proc_cpu import load_average

    from loopwright.engines.temporal._devserver import start_dev_server
    from loopwright.store._pg_local import start_local_postgres

    trees = [Path(t).resolve() for t in args.tree]
    pythons = dict(p.split("=", 1) for p in args.python_of)
    pythons = {str(Path(k).resolve()): v for k, v in pythons.items()}
    pg = start_local_postgres(settings={"shared_preload_libraries": "pg_stat_statements"})
    server = start_dev_server()
    folder = Path(tempfile.mkdtemp(prefix="loopwright-compare-"))
    results: dict[str, list[dict[str, Any]]] = {str(t): [] for t in trees}
    try:
        urls = {}
        for i, tree in enumerate(trees):
            urls[tree] = pg.create_database(f"tree{i}")
            migrate = ("import sys; from loopwright.store import open_store; "
                       "open_store(sys.argv[1], migrate=True).close()")  # fmt: skip
            env = {**os.environ, "PYTHONPATH": str(tree / "src")}
            subprocess.run([python_of(tree, pythons), "-c", migrate, urls[tree]], env=env,
                           check=True)  # fmt: skip
            import psycopg

            with psycopg.connect(urls[tree], autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        ctx = {"address": server.address, "urls": urls, "pythons": pythons,
               "per_worker": args.per_worker, "script": script(folder, STEPS),
               "server_pid": server.process.pid, "postgres_pid": pg.process.pid}  # fmt: skip
        counts = [int(n) for n in args.workers.split(",")]
        for r in range(args.rounds):
            order = trees if r % 2 == 0 else trees[::-1]
            for n in counts:
                for i, tree in enumerate(order):
                    profile = ""
                    if args.profile:
                        Path(args.profile).mkdir(parents=True, exist_ok=True)
                        profile = str(Path(args.profile) / f"{tree.name}-{n}w-r{r}.txt")
                    load = load_average()
                    row = one_round(ctx, tree, n, f"q{r}-{n}-{i}-{tree.name}", profile)
                    row |= {"round": r, "load_average": [load, load_average()]}
                    results[str(tree)].append(row)
                    print(f"round {r} {tree.name} {n}w: {row['runs_per_s']:.2f} runs/s, "
                          f"worker {row['cpu_ms_per_run']['workers']:.0f} ms/run, server "
                          f"{row['cpu_ms_per_run']['server']:.0f}, postgres "
                          f"{row['cpu_ms_per_run']['postgres']:.0f}, load {load}",
                          file=sys.stderr, flush=True)  # fmt: skip
        if args.cprofile:
            Path(args.cprofile).mkdir(parents=True, exist_ok=True)
            for i, tree in enumerate(trees):
                where = str(Path(args.cprofile) / f"{tree.name}.pstats")
                row = one_round(ctx, tree, 1, f"cprofile-{i}", "", where)
                print(f"cProfile {tree.name}: {row} -> {where}", file=sys.stderr)
    finally:
        server.stop()
        pg.stop()
    out = {"trees": [str(t) for t in trees], "results": results}
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))
    print_table(trees, counts, results)


def print_table(trees: list[Path], counts: list[int], results: dict[str, Any]) -> None:
    print(
        "| tree | workers | runs/s (median) | worker ms/run | server ms/run | "
        "postgres ms/run | client ms/run | statements/run | activities/run | payloads/run |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for tree in trees:
        for n in counts:
            rows = [r for r in results[str(tree)] if r["workers"] == n]
            if not rows:
                continue

            def med(key: str, rows: list[dict[str, Any]] = rows) -> float:
                return float(statistics.median(r["cpu_ms_per_run"][key] for r in rows))

            h = rows[-1]["history"]
            print(f"| {tree.name} | {n} | {statistics.median(r['runs_per_s'] for r in rows):.2f} "
                  f"| {med('workers'):.0f} | {med('server'):.0f} | {med('postgres'):.0f} | "
                  f"{med('client'):.0f} | {rows[-1]['statements_per_run']:.0f} | "
                  f"{sum(h['activities'].values())} | {h['payloads']} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tree", action="append", default=[])
    parser.add_argument("--python-of", action="append", default=[], metavar="TREE=PYTHON")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--per-worker", type=int, default=30)
    parser.add_argument("--profile", default="", help="folder: py-spy of worker 0 per round")
    parser.add_argument("--out", default="")
    parser.add_argument(
        "--cprofile",
        default="",
        help="folder: cProfile of one in-process worker's loop thread per tree, after the rounds",
    )
    for name in ("address", "url", "queue", "script"):
        parser.add_argument(f"--{name}", help=argparse.SUPPRESS)
    for name in ("server-pid", "postgres-pid"):
        parser.add_argument(f"--{name}", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.workers = int(args.workers)
        child(args)
    else:
        parent(args)


if __name__ == "__main__":
    main()
