"""A real uvicorn server in a thread on a loopback port, and helpers to talk to it."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import httpx
import uvicorn

from loopwright.messages import ModelRequest, ModelResponse, ToolCall, Usage
from loopwright.models import ModelRegistry
from loopwright.runtime import Runtime
from loopwright.server import FolderTaskLauncher, ServerConfig, create_app
from loopwright.store import RunStore
from loopwright.tasks import TaskSettings
from loopwright.testing import InMemoryRunStore

TOKENS = {"acme-token-1234": "acme", "globex-token-5678": "globex"}
ACME = {"Authorization": "Bearer acme-token-1234"}
GLOBEX = {"Authorization": "Bearer globex-token-5678"}


class LiveServer:
    """uvicorn serving `create_app(config)` on 127.0.0.1 in its own thread and loop."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.app = create_app(config)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(2048)  # connections queue until uvicorn accepts them: no start race
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(
            uvicorn.Config(self.app, log_level="warning", ws="websockets-sansio", lifespan="off")
        )
        self.thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        await self.server.serve(sockets=[self.sock])
        # runs still going (a task waiting at its gate) end as `loopwright serve` ends them
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def start(self) -> LiveServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


@contextmanager
def live_server(config: ServerConfig) -> Iterator[LiveServer]:
    server = LiveServer(config).start()
    try:
        yield server
    finally:
        server.stop()


def make_config(
    tmp_path: Path,
    *,
    tokens: dict[str, str] | None = None,
    store: RunStore | None = None,
    tasks_dir: Path | None = None,
    models: ModelRegistry | None = None,
    allow_models: frozenset[str] = frozenset(),
) -> ServerConfig:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    tasks = None
    if tasks_dir is not None:
        settings = TaskSettings(workspace=workspace, gate_timeout_s=60.0)
        tasks = FolderTaskLauncher(tasks_dir, settings=settings)
    return ServerConfig(
        runtime=Runtime(store if store is not None else InMemoryRunStore(), models=models),
        tokens=tokens,
        workspace=str(workspace),
        tasks=tasks,
        allowed_models=frozenset({f"scripted:{tmp_path.parent}/*"}) | allow_models,
    )


def write_script(path: Path, replies: list[Any]) -> str:
    """A ScriptedModel file; returns its model spec (`scripted:PATH`)."""
    path.write_text(json.dumps(replies), encoding="utf-8")
    return f"scripted:{path}"


def echo_script(path: Path, calls: int, answer: str = "done") -> str:
    """`calls` echo tool calls, then a final answer."""
    replies: list[Any] = [
        json.dumps({"thought": f"step {i}", "action": "echo", "action_input": {"text": f"hi {i}"}})
        for i in range(calls)
    ]
    replies.append(json.dumps({"thought": "finished", "final_answer": answer}))
    return write_script(path, replies)


def sse_events(response: httpx.Response) -> Iterator[tuple[str | None, str, str | None]]:
    """(event id, data, event name) of each SSE message of a streaming response."""
    ident: str | None = None
    name: str | None = None
    data: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if data:
                yield ident, "\n".join(data), name
            ident, name, data = None, None, []
        elif line.startswith("id:"):
            ident = line[3:].strip()
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


WAIT_S = 20.0


def ws_connect(server: LiveServer, run_id: str, *, after: int = 0, token: str | None = None) -> Any:
    from websockets.sync.client import connect

    query = f"?after={after}" + (f"&access_token={token}" if token else "")
    return connect(f"{server.ws_url}/api/runs/{run_id}/ws{query}", open_timeout=WAIT_S)


def ws_events(
    server: LiveServer,
    run_id: str,
    *,
    after: int = 0,
    token: str | None = None,
    until: str | None = None,
) -> list[dict[str, Any]]:
    """Events from the WebSocket until the server closes it (or an event of type `until`)."""
    from websockets.exceptions import ConnectionClosedOK

    events: list[dict[str, Any]] = []
    with ws_connect(server, run_id, after=after, token=token) as ws:
        try:
            while True:
                event = json.loads(ws.recv(timeout=WAIT_S))
                events.append(event)
                if until is not None and event["type"] == until:
                    break
        except ConnectionClosedOK:
            pass
    return events


def sse_stream(
    server: LiveServer,
    run_id: str,
    *,
    after: int | None = None,
    last_event_id: int | None = None,
    headers: dict[str, str] | None = None,
    until: str | None = None,
) -> tuple[list[dict[str, Any]], list[str | None], dict[str, Any] | None]:
    """(events, their SSE ids, the `end` message or None) of one SSE connection."""
    request_headers = {"Accept": "text/event-stream", **(headers or {})}
    if last_event_id is not None:
        request_headers["Last-Event-ID"] = str(last_event_id)
    params = {"after": after} if after is not None else {}
    events: list[dict[str, Any]] = []
    ids: list[str | None] = []
    end = None
    url = f"{server.url}/api/runs/{run_id}/events"
    with httpx.stream("GET", url, headers=request_headers, params=params, timeout=WAIT_S) as resp:
        assert resp.status_code == 200, resp.read()
        for ident, data, name in sse_events(resp):
            if name == "end":
                end = json.loads(data)
                break
            event = json.loads(data)
            events.append(event)
            ids.append(ident)
            if until is not None and event["type"] == until:
                break
    return events, ids, end


def wait_finished(
    server: LiveServer, run_id: str, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """Follow the run's SSE stream to its end; return the run as GET shows it."""
    _, _, end = sse_stream(server, run_id, headers=headers)
    assert end is not None
    response = httpx.get(f"{server.url}/api/runs/{run_id}", headers=headers or {})
    run: dict[str, Any] = response.json()
    return run


def start_run(
    server: LiveServer, body: dict[str, Any], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    response = httpx.post(f"{server.url}/api/runs", json=body, headers=headers or {})
    assert response.status_code == 201, response.text
    run: dict[str, Any] = response.json()
    return run


def seqs(events: list[dict[str, Any]]) -> list[int]:
    return [int(e["seq"]) for e in events]


GATED_TASK = """\
name: publish-notes
description: List the workspace, ask a person, then write NOTES.md.
tools: [list_files, write_file]
inputs:
  title: null
steps:
  - name: survey
    type: tool
    tool: list_files
  - name: approve
    type: gate
    message_template: "Write NOTES.md titled {inputs.title}?"
  - name: write
    type: tool
    tool: write_file
    args_from:
      content: inputs.title
    args:
      path: NOTES.md
"""


def tasks_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir(exist_ok=True)
    (folder / "publish-notes.yaml").write_text(GATED_TASK)
    return folder


class HeldModel:
    """Answers only when the test lets it: `release(n)` allows n more replies. Each reply is
    an echo call (distinct text), the last one a final answer."""

    name = "held"
    preferred_tool_mode: Literal["native"] = "native"

    def __init__(self, calls: int) -> None:
        self.calls = calls
        self.made = 0
        self.allowed = threading.Semaphore(0)

    def release(self, replies: int) -> None:
        self.allowed.release(replies)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.to_thread(self.allowed.acquire)
        self.made += 1
        if self.made <= self.calls:
            call = ToolCall(f"c{self.made}", "echo", {"text": f"line {self.made}"})
            return ModelResponse(tool_calls=(call,), usage=Usage(10, 5))
        return ModelResponse(text="all lines echoed", usage=Usage(10, 5))


def start_many(server: LiveServer, model: str, runs: int) -> list[str]:
    """`runs` runs of `model` started through the API, 8 at a time; their ids."""

    def start(index: int) -> str:
        body = {"prompt": f"run {index}", "model": model}
        response = httpx.post(f"{server.url}/api/runs", json=body, timeout=60)
        assert response.status_code == 201, response.text
        return str(response.json()["run_id"])

    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(start, range(runs)))


def handles_left(server: LiveServer, run_ids: list[str], limit_s: float) -> int:
    """Once every run is stored completed and its task in the server has ended (bounded by
    `limit_s`): how many handles the server's engines still hold."""
    runtime = server.config.runtime
    deadline = time.monotonic() + limit_s
    while True:
        records = [runtime.store.get_run(run_id) for run_id in run_ids]
        ended = all(r is not None and r.status == "completed" for r in records)
        handles = [h for engine in runtime.engines.values() for h in list(engine.handles.values())]
        if ended and all(h.done for h in handles):
            break
        assert time.monotonic() < deadline, "the runs did not end in time"
        time.sleep(0.05)
    httpx.get(f"{server.url}/api/runs?limit=1")  # a turn of the server's loop after the ends
    return sum(len(engine.handles) for engine in runtime.engines.values())
