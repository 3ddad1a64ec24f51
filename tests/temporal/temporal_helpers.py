"""Helpers of the Temporal engine tests: scripted runs (a ScriptedModel file per run) and
worker processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHandle, WorkflowHistory
from temporalio.converter import PayloadConverter
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Replayer

from inprocess_cli import CliRun, clean_env
from loopwright.engines.temporal import DevServer, EngineSettings, TemporalEngine, start_dev_server
from loopwright.engines.temporal._codec import KEY_ENV, data_converter, load_cipher
from loopwright.runtime import GateDecided, RunHandle, RunSpec, Runtime
from loopwright.server import ServerConfig, create_app
from loopwright.store import RunStore, open_store
from loopwright.tasks import TaskSpec

SRC = Path(__file__).resolve().parents[2] / "src"
TESTS = Path(__file__).resolve().parent
TOOLS_FILE = Path(__file__).with_name("run_tools.py")
VOLATILE = {"run_id", "ts", "duration_ms"}

# Names a Temporal history records (what `temporal workflow start` and a history's events
# show): part of the replay contract, so written out here, not imported.
AGENT_RUN = "loopwright.agent_run.v1"
MODEL_CALL = "loopwright.model_call.v1"
TOOL_CALL = "loopwright.tool_call.v1"
GATE_OPEN = "loopwright.gate_open.v1"


def worker_payload_converter() -> PayloadConverter:
    """The payload converter a loopwright worker and client write and read payloads with
    (before the codec seals them and after it opens them)."""
    return data_converter(load_cipher()).payload_converter


def action(tool: str, **arguments: Any) -> str:
    return json.dumps({"thought": f"use {tool}", "action": tool, "action_input": arguments})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def write_script(folder: Path, out: Path, lines: list[str]) -> Path:
    """echo, then one append_line per line, then the answer."""
    replies = [action("echo", text="hello")]
    replies += [action("append_line", path=str(out), text=line) for line in lines]
    replies.append(final(f"wrote {len(lines)} lines"))
    script = folder / "script.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    return script


def run_command(script: Path, workspace: Path, store: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "loopwright", "run", "echo hello, then write the lines",
            "--model", f"scripted:{script}", "--tools", f"echo,{TOOLS_FILE}:append_line",
            "--workspace", str(workspace), "--store", store, "--json", *extra]  # fmt: skip


def client_env(home: Path) -> dict[str, str]:
    """A clean environment (`clean_env`) for a client in this process, with the suite's
    payload key."""
    return clean_env(home, **{KEY_ENV: os.environ[KEY_ENV]})


def run_in_process(
    run_cli: Callable[..., CliRun], command: list[str], home: Path
) -> tuple[int, list[dict[str, Any]], str]:
    """`command` (`python -m loopwright ARGS`, as run_command makes it) as `loopwright ARGS`
    in this process (the `run_cli` fixture; `home`: its home folder), with the suite's
    payload key: (exit code, the JSON events it printed, stderr)."""
    assert command[1:3] == ["-m", "loopwright"], command
    done = run_cli(*command[3:], env=client_env(home))
    events = [json.loads(line) for line in done.out.splitlines() if line.startswith("{")]
    return done.code, events, done.err


def shape(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events without what differs between two runs of the same script (ids, times)."""
    return [{k: v for k, v in e.items() if k not in VOLATILE} for e in events]


def loopwright_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), **extra}
    env.pop("LOOPWRIGHT_STORE", None)
    return env


class KeptServer:
    """This test process's dev server: started when a test first needs it, and again when
    it died since (its end reported, its log kept)."""

    def __init__(self, cli: Path | None = None) -> None:
        self.cli = cli
        """The `temporal` CLI to start it with (None: the one `start_dev_server` finds)."""
        self.server: DevServer | None = None

    def current(self) -> DevServer:
        ended = self.ended("after the test before")
        if ended is not None:  # in the warnings summary: no fault of the test that needs it
            with warnings.catch_warnings():
                warnings.simplefilter("always")
                warnings.warn(ended, stacklevel=1)
        if self.server is None:
            self.server = start_dev_server(self.cli)
        return self.server

    def ended(self, when: str) -> str | None:
        """None while the server runs; else what to report of its end (it is let go, its
        log kept for a closer look)."""
        server = self.server
        if server is None or server.alive():
            return None
        self.server = None
        server.stop(keep_log=True)
        return (
            f"the Temporal dev server at {server.address} exited "
            f"({server.process.returncode}) {when}; its log ({server.log}) ends: "
            f"{server.log_tail(1000)}"
        )

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


@contextlib.contextmanager
def serving(command: list[str], log: Path, env: dict[str, str]) -> Iterator[str]:
    """`loopwright serve --port 0 ...` (`command`): it binds a port itself and says which
    (no port picked here and released for it to bind: another process could take it in
    between). Its URL once its API answers (within 60 s); stopped at the end."""
    assert command[command.index("--port") + 1] == "0", command
    with log.open("wb") as out:  # the child has its own copy
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 60
        url = ""
        while True:
            said = log.read_text(errors="replace")
            if not url and "the API on http://" in said:
                url = said.split("the API on ", 1)[1].split()[0]
            if url and _answers(f"{url}/api/runs"):
                break
            assert time.monotonic() < deadline and proc.poll() is None, said
            time.sleep(0.1)  # polling its log and its API: nothing to wait on instead
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


WORKER_START_S = 180.0
"""How long a worker process may take to poll its queue: Python's start-up, imports and the
connections took over a minute on a 2-core machine at a load average of 20-40."""


@dataclass
class Workers:
    """`loopwright worker` processes of one test (each stopped at the end)."""

    address: str
    store: str
    queue: str
    log_dir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(
        self,
        *options: str,
        via: str | None = None,
        allowing: Sequence[str] | None = None,
        **env: str,
    ) -> subprocess.Popen[bytes]:
        """A worker (reaching Temporal at `via` instead, when given: a proxy). Its calls
        have 2 s to finish when it is stopped (not the default 30: a test that ends with
        a call still hanging stops its workers at once), and a run it holds waits 1 s for
        it (not the default 10: a killed worker's runs go on elsewhere at once), unless
        `options` say otherwise. It allows the code of this suite's tool and task files
        and of the test's folder (`allowing`: these flags instead)."""
        if allowing is None:
            allowing = ("--allow-tools", str(TESTS), "--allow-tools", str(self.log_dir))
        command = [sys.executable, "-m", "loopwright", "worker", "--temporal",
                   via or self.address, "--store", self.store, "--task-queue", self.queue,
                   "--graceful-timeout", "2", "--sticky-timeout", "1", *allowing,
                   *options]  # fmt: skip
        with (self.log_dir / f"worker{len(self.procs)}.log").open("wb") as log:  # the child's
            proc = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=loopwright_env(**env)
            )
        self.procs.append(proc)
        return proc

    def log_of(self, index: int) -> str:
        return (self.log_dir / f"worker{index}.log").read_text()

    def wait_polling(self, index: int = -1, limit_s: float = WORKER_START_S) -> None:
        """Return once the worker (the last started, by default) says it polls its queue."""
        number = index % len(self.procs)
        deadline = time.monotonic() + limit_s
        while "polling" not in self.log_of(number):
            assert self.procs[number].poll() is None, self.log_of(number)
            assert time.monotonic() < deadline, f"not polling in {limit_s:g} s: {self.logs()}"
            time.sleep(0.1)  # polling its log: the worker says nothing else

    def logs(self) -> str:
        return "\n".join(p.read_text() for p in sorted(self.log_dir.glob("worker*.log")))

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class Provider(ThreadingHTTPServer):
    """An OpenAI-compatible provider on loopback: `replies` in order; the call numbered
    `hang_on` (1-based) never answers (until `release`)."""

    replies: list[tuple[int, dict[str, str], dict[str, Any]]]
    calls: list[float]
    bodies: list[dict[str, Any]]
    hang_on: int | None
    release: threading.Event


class Handler(BaseHTTPRequestHandler):
    server: Provider

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.calls.append(time.monotonic())
        self.server.bodies.append(body)
        if len(self.server.calls) == self.server.hang_on:
            sys.stderr.write("provider: hanging\n")
            self.server.release.wait(120)
            return
        status, headers, reply = self.server.replies.pop(0)
        data = json.dumps(reply).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve_provider() -> Iterator[Provider]:
    server = Provider(("127.0.0.1", 0), Handler)
    server.replies, server.calls, server.bodies = [], [], []
    server.hang_on, server.release = None, threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def payloads_of(message: Message) -> list[Payload]:
    """Every Payload anywhere in a history or one of its events (a protobuf message), as
    Temporal stores it."""
    if isinstance(message, Payload):
        return [message]
    found: list[Payload] = []
    for described, value in message.ListFields():
        if described.type != described.TYPE_MESSAGE:
            continue
        if described.is_repeated:
            for item in value.values() if hasattr(value, "values") else value:
                found += payloads_of(item)
        else:
            found += payloads_of(value)
    return found


async def decrypted_history(handle: WorkflowHandle[Any, Any]) -> str:
    """A workflow's history as JSON and the text of every payload in it, decrypted with
    this process's key (as a worker reads it)."""
    history = await handle.fetch_history()
    payloads = [p for event in history.events for p in payloads_of(event)]
    codec = load_cipher()
    texts = [p.data.decode("utf-8", "replace") for p in await codec.decode(payloads)]
    return history.to_json() + "\n".join(texts)


def completion(text: str) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


async def model_call(store: RunStore, run_id: str, seq: int) -> Any:
    """The model call at event `seq` as the dashboard's API shows it (its request rebuilt
    from the store, checked against the fingerprint the worker recorded)."""
    runtime = Runtime(store)
    transport = httpx.ASGITransport(app=create_app(ServerConfig(runtime=runtime)))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            response = await client.get(f"/api/runs/{run_id}/model_calls/{seq}")
    finally:
        runtime.close()
    assert response.status_code == 200, response.text
    return response.json()


async def gates_opened(handle: WorkflowHandle[Any, Any], count: int = 1) -> None:
    """Return once `count` gates of the run are open in its workflow: their `gate_open`
    activities completed in its history (read as it grows: a long poll, not a sleep).
    A gate seen in the store is not yet open there: its worker may still be reporting the
    activity, and a worker SIGKILLed then loses it until its 60 s start-to-close timeout."""
    scheduled: dict[int, str] = {}
    opened = 0
    async for event in handle.fetch_history_events(wait_new_event=True):
        if event.HasField("activity_task_scheduled_event_attributes"):
            attributes = event.activity_task_scheduled_event_attributes
            scheduled[event.event_id] = attributes.activity_type.name
        elif event.HasField("activity_task_completed_event_attributes"):
            done = event.activity_task_completed_event_attributes.scheduled_event_id
            opened += scheduled.get(done) == GATE_OPEN
            if opened >= count:
                return
    raise AssertionError(f"the run ended with {opened} of {count} gates opened")


async def replay_all(checker: Replayer, handles: list[WorkflowHandle[Any, Any]]) -> dict[str, str]:
    """Replay each run's history with one replayer (one worker for all, not one per
    history); the runs whose replay failed, with why (empty: every history replays)."""

    async def histories() -> AsyncIterator[WorkflowHistory]:
        for handle in handles:
            yield await handle.fetch_history()

    results = await checker.replay_workflows(histories(), raise_on_replay_failure=False)
    return {run: repr(failure) for run, failure in results.replay_failures.items()}


class TemporalRuns:
    """The runs of a test, started and decided as the CLI and the server do it: through a
    `Runtime` whose engine is a `TemporalEngine` on the test's task queue (registered in the
    store, listed `queued` until a worker takes them). `start` gives the run's workflow
    handle once its workflow exists."""

    def __init__(self, workers: Workers) -> None:
        self.workers = workers
        self.store = open_store(workers.store)
        self.runtimes: dict[EngineSettings | None, Runtime] = {}
        self.handles: list[RunHandle] = []

    def runtime(self, settings: EngineSettings | None = None) -> Runtime:
        """The Runtime whose engine starts runs with `settings` (one per settings)."""
        if settings not in self.runtimes:
            engine = TemporalEngine(
                self.workers.address, self.store, task_queue=self.workers.queue, settings=settings
            )
            self.runtimes[settings] = Runtime(self.store, engine=engine)
        return self.runtimes[settings]

    async def start(
        self, spec: RunSpec, *, settings: EngineSettings | None = None, run_id: str | None = None
    ) -> WorkflowHandle[Any, Any]:
        return await self._workflow(self.runtime(settings).start(spec, run_id=run_id))

    async def start_task(
        self, spec: TaskSpec, *, settings: EngineSettings | None = None, run_id: str | None = None
    ) -> WorkflowHandle[Any, Any]:
        return await self._workflow(self.runtime(settings).start_task(spec, run_id=run_id))

    async def decide(
        self, run_id: str, gate_id: str, approved: bool, by: str, reason: str = ""
    ) -> GateDecided:
        """`Runtime.approve`: checked against the run's log, then its workflow's Update (or
        stored for its next worker while none polls)."""
        return await self.runtime().approve(run_id, gate_id, approved, by, reason)

    async def _workflow(self, handle: RunHandle) -> WorkflowHandle[Any, Any]:
        """The run's workflow, once the engine has started it (its start's error, if any)."""
        self.handles.append(handle)
        client = await self.runtime().engine.client()  # type: ignore[attr-defined]
        workflow: WorkflowHandle[Any, Any] = client.get_workflow_handle(handle.run_id)
        while True:
            if handle.done and (handle.task.cancelled() or handle.task.exception() is not None):
                await handle.wait()  # raises why it did not start
            try:
                first = (await workflow.describe()).run_id  # its first run (it just started)
                started: WorkflowHandle[Any, Any] = client.get_workflow_handle(
                    handle.run_id, first_execution_run_id=first
                )
                return started
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:
                    raise
            await asyncio.wait({handle.task}, timeout=0.05)

    async def aclose(self) -> None:
        """Cancel the runs still going, as their Runtime does when its handle is cancelled
        (a bounded wait: the test's workers stop next), and close the store."""
        for handle in self.handles:  # a run the test terminated: its watcher's error is seen
            if handle.done and not handle.task.cancelled():
                handle.task.exception()
        waiting = [h.task for h in self.handles if not h.done]
        for task in waiting:
            task.cancel()
        if waiting:
            await asyncio.wait(waiting, timeout=10)
        for runtime in self.runtimes.values():
            runtime.close()
            await runtime.aclose()
        self.store.close()
