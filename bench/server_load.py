"""Load on one server process: 200 concurrent runs, 1,000 live subscribers (WebSocket + SSE).

The server (`loopwright.server.create_app` under uvicorn) runs in a child process; this
process is the clients. Each run makes STEPS echo tool calls against a model that answers
after `--latency` seconds (asyncio sleep: the simulated network, not synchronisation), so
runs are in flight while they are watched. Every run gets `--subs` subscribers from seq 0,
alternately WebSocket and SSE; one per run drops its connection half-way and reconnects
from the last seq it saw (`?after=` / `Last-Event-ID`). At the end each subscriber's seqs
are checked against the run's stored log: missed and duplicated events must both be 0.

    python bench/server_load.py [--runs 200] [--subs 5] [--steps 10] [--latency 0.05]
                                [--store sqlite|memory]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import websockets

TIME_LIMIT_S = 300.0


# --- the server process ----------------------------------------------------------------


def serve(latency: float, steps: int, store_file: str) -> None:
    import uvicorn

    from loopwright.messages import ModelRequest, ModelResponse, ToolCall
    from loopwright.models import ModelRegistry
    from loopwright.server import ServerConfig, create_app

    class PacedModel:
        """STEPS echo calls, then an answer; each reply after `latency` seconds."""

        name = "paced"
        preferred_tool_mode: Literal["native", "prompted"] = "native"

        def __init__(self) -> None:
            self.calls = 0

        async def complete(self, request: ModelRequest) -> ModelResponse:
            await asyncio.sleep(latency)
            self.calls += 1
            if self.calls <= steps:
                call = ToolCall(f"c{self.calls}", "echo", {"text": f"step {self.calls}"})
                return ModelResponse(tool_calls=(call,))
            return ModelResponse(text="done")

    models = ModelRegistry().with_factory("paced", lambda _name, _url: PacedModel())
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    print(sock.getsockname()[1], flush=True)
    from loopwright.runtime import Runtime
    from loopwright.store import open_store
    from loopwright.testing import InMemoryRunStore

    store = InMemoryRunStore() if store_file == ":memory:" else open_store(store_file)
    app = create_app(ServerConfig(runtime=Runtime(store, models=models), default_model="paced:x"))
    config = uvicorn.Config(app, log_level="warning", ws="websockets-sansio", backlog=4096)
    uvicorn.Server(config).run(sockets=[sock])


# --- the clients ---------------------------------------------------------------------------


@dataclass
class Subscriber:
    run_id: str
    transport: str
    drop_after: int | None
    seqs: list[int] = field(default_factory=list)
    lags_ms: list[float] = field(default_factory=list)
    reconnects: int = 0
    unplanned: int = 0

    def take(self, event: dict[str, Any]) -> bool:
        """Record one event; True when it ends the run."""
        self.seqs.append(int(event["seq"]))
        self.lags_ms.append((time.time() - float(event["ts"])) * 1000)
        return bool(event["type"] == "run_finished")

    @property
    def last(self) -> int:
        return self.seqs[-1] if self.seqs else 0


async def follow_ws(port: int, sub: Subscriber) -> None:
    while True:
        url = f"ws://127.0.0.1:{port}/api/runs/{sub.run_id}/ws?after={sub.last}"
        try:
            async with websockets.connect(url, max_queue=None, compression=None) as ws:
                async for message in ws:
                    if sub.take(json.loads(message)):
                        return
                    if sub.drop_after is not None and len(sub.seqs) == sub.drop_after:
                        break  # drop the connection half-way; reconnect from the last seq
            sub.drop_after = None
            sub.reconnects += 1
        except (OSError, websockets.ConnectionClosedError):
            sub.unplanned += 1  # reconnect from the last seq, as a real client would


async def follow_sse(client: httpx.AsyncClient, sub: Subscriber) -> None:
    while True:
        headers = {"Accept": "text/event-stream", "Last-Event-ID": str(sub.last)}
        url = f"/api/runs/{sub.run_id}/events"
        try:
            async with client.stream("GET", url, headers=headers) as response:
                async for line in response.aiter_lines():
                    if line.startswith("event: end"):
                        return
                    if not line.startswith("data:"):
                        continue
                    if sub.take(json.loads(line[5:])):
                        return
                    if sub.drop_after is not None and len(sub.seqs) == sub.drop_after:
                        break
            sub.drop_after = None
            sub.reconnects += 1
        except httpx.TransportError:
            sub.unplanned += 1


async def watch_run(
    client: httpx.AsyncClient, port: int, prompt: str, subs: int, per_run: int
) -> list[Subscriber]:
    """Start one run, then follow it with `subs` subscribers at once (while it runs)."""
    created = await client.post("/api/runs", json={"prompt": prompt, "tools": ["echo"]})
    run_id = created.json()["run_id"]
    subscribers = [
        Subscriber(run_id, "ws" if k % 2 == 0 else "sse", per_run // 2 if k == 0 else None)
        for k in range(subs)
    ]
    await asyncio.gather(
        *(follow_ws(port, s) if s.transport == "ws" else follow_sse(client, s)
          for s in subscribers)
    )  # fmt: skip
    return subscribers


async def load(port: int, runs: int, subs: int, steps: int) -> dict[str, Any]:
    # no keep-alive: a pooled connection the server is just closing would fail a request
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    timeout = httpx.Timeout(60.0, read=None)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=timeout
    ) as client:
        started = time.perf_counter()
        per_run = 4 * steps + 4  # what a run of STEPS tool calls logs
        watched = await asyncio.gather(
            *(watch_run(client, port, f"run {i}", subs, per_run) for i in range(runs))
        )
        subscribers = [sub for group in watched for sub in group]
        run_ids = sorted({sub.run_id for sub in subscribers})
        elapsed = time.perf_counter() - started
        expected = {}
        for run_id in run_ids:
            page = (await client.get(f"/api/runs/{run_id}/events")).json()
            expected[run_id] = [e["seq"] for e in page["events"]]
    return report(subscribers, expected, elapsed, runs)


def report(
    subscribers: list[Subscriber], expected: dict[str, list[int]], elapsed: float, runs: int
) -> dict[str, Any]:
    delivered = sum(len(s.seqs) for s in subscribers)
    missed = sum(len(set(expected[s.run_id]) - set(s.seqs)) for s in subscribers)
    duplicated = sum(len(s.seqs) - len(set(s.seqs)) for s in subscribers)
    lags = sorted(lag for s in subscribers for lag in s.lags_ms)
    return {
        "runs": runs,
        "subscribers": len(subscribers),
        "websocket": sum(s.transport == "ws" for s in subscribers),
        "sse": sum(s.transport == "sse" for s in subscribers),
        "reconnects": sum(s.reconnects for s in subscribers),
        "unplanned reconnects": sum(s.unplanned for s in subscribers),
        "events logged": sum(len(v) for v in expected.values()),
        "events delivered": delivered,
        "seconds": elapsed,
        "events/s delivered": delivered / elapsed,
        "lag p50 ms": statistics.median(lags),
        "lag p99 ms": lags[int(len(lags) * 0.99)],
        "missed": missed,
        "duplicated": duplicated,
    }


def markdown(result: dict[str, Any], args: argparse.Namespace, rates: list[float]) -> str:
    lines = [
        "## HTTP server load: one process, concurrent runs and live subscribers",
        "",
        f"{args.runs} runs of {args.steps} tool calls each (model latency "
        f"{args.latency * 1000:.0f} ms per reply), {args.runs * args.subs} subscribers "
        f"({result['websocket']} WebSocket, {result['sse']} SSE; one per run drops its "
        "connection half-way and reconnects from the last seq it saw), over loopback on "
        f"{os.cpu_count()} CPU(s); the clients run in a second process. The server logs to "
        f"{'a SQLite file' if args.store == 'sqlite' else 'memory'}.",
        "",
        "| measure | value |",
        "| --- | ---: |",
    ]
    for key, value in result.items():
        shown = f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"
        lines.append(f"| {key} | {shown} |")
    verdict = "no" if result["missed"] == 0 and result["duplicated"] == 0 else "SOME"
    spread = " – ".join(f"{rate:,.0f}" for rate in (rates[0], rates[-1]))
    lines += [
        "",
        f"The median of {len(rates)} loads by events/s (range {spread} events/s: the machine "
        "is shared); missed and duplicated are summed over all of them.",
        f"Subscribers that missed or duplicated an event: {verdict}.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--subs", type=int, default=5, help="subscribers per run")
    parser.add_argument("--steps", type=int, default=10, help="tool calls per run")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per model reply")
    parser.add_argument(
        "--store", default="sqlite", choices=["sqlite", "memory"], help="run store of the server"
    )
    parser.add_argument("--repeat", type=int, default=3, help="report the median of N loads")
    parser.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.serve:
        serve(args.latency, args.steps, args.serve)
        return 0
    results = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as folder:
            store = str(Path(folder) / "runs.db") if args.store == "sqlite" else ":memory:"
            results.append(run_load(args, store))
    results.sort(key=lambda r: float(r["events/s delivered"]))
    result = dict(results[len(results) // 2])  # the median repeat
    result["missed"] = sum(r["missed"] for r in results)  # over every repeat
    result["duplicated"] = sum(r["duplicated"] for r in results)
    rates = [float(r["events/s delivered"]) for r in results]
    print(markdown(result, args, rates))
    return 0 if result["missed"] == 0 and result["duplicated"] == 0 else 1


def run_load(args: argparse.Namespace, store: str) -> dict[str, Any]:
    """Start the server process on `store`, put the load on it, stop it."""
    command = [sys.executable, __file__, "--serve", store, "--steps", str(args.steps),
               "--latency", str(args.latency)]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        result = asyncio.run(
            asyncio.wait_for(load(port, args.runs, args.subs, args.steps), TIME_LIMIT_S)
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    return result


if __name__ == "__main__":
    sys.exit(main())
