"""A real uvicorn server in a thread on a loopback port, and helpers to talk to it."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from loopwright.runtime import Runtime
from loopwright.server import FolderTaskLauncher, ServerConfig, create_app
from loopwright.store import InMemoryRunStore, RunStore
from loopwright.tasks import TaskSettings

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
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def _run(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self.server.serve(sockets=[self.sock]))

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
) -> ServerConfig:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    tasks = None
    if tasks_dir is not None:
        settings = TaskSettings(workspace=workspace, gate_timeout_s=60.0)
        tasks = FolderTaskLauncher(tasks_dir, settings=settings)
    return ServerConfig(
        runtime=Runtime(store if store is not None else InMemoryRunStore()),
        tokens=tokens,
        workspace=str(workspace),
        tasks=tasks,
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
