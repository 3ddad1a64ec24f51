"""Helpers of the kill trials: the trials' scripted runs, an OpenAI-compatible provider that
answers many runs at once from their scripts (and hangs once where a trial says), and which
worker process holds a loopback connection (Linux /proc)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from run_tools import KILL_MARK
from temporal_helpers import action, completion, final

from loopwright.events import event_to_dict
from loopwright.runtime import RunSpec, Runtime

TOOLS = Path(__file__).with_name("run_tools.py")
LINES = ("line1", "line2", "line3")
TRIAL_MARK = re.compile(r"trial-(\d+)")


@dataclass
class Trial:
    """One run whose worker is SIGKILLed once: inside `append_line` ("once": not
    idempotent) or `put_line` ("idempotent") after the effect of its call number `at`, or
    in the middle of its model call number `at` ("model")."""

    number: int
    kind: str
    at: int
    folder: Path
    embedded: list[dict[str, Any]] = field(default_factory=list)
    pid: int | None = None
    """The worker that was inside the call when it was killed."""

    @property
    def key(self) -> str:
        return f"trial-{self.number:02d}"

    @property
    def out(self) -> Path:
        return self.folder / "out.txt"

    @property
    def tool(self) -> str:
        return "put_line" if self.kind == "idempotent" else "append_line"

    def lines(self) -> list[str]:
        """What the run writes; the tool call killed holds the mark (kind once/idempotent)."""
        killed = self.at if self.kind != "model" else 0
        return [f"{line} {KILL_MARK}" if i == killed else line for i, line in enumerate(LINES, 1)]

    def replies(self) -> list[str]:
        calls = [action(self.tool, path=str(self.out), text=line) for line in self.lines()]
        return [action("echo", text=self.key), *calls, final(f"{self.key} wrote 3 lines")]

    def spec(self, provider_url: str) -> RunSpec:
        tools = ("echo", f"{TOOLS}:{self.tool}")
        request = f"{self.key}: echo, then write the lines"
        if self.kind == "model":
            return RunSpec(request=request, model="openai:trial-model", base_url=provider_url,
                           tools=tools, workspace=str(self.folder))  # fmt: skip
        script = self.folder / "script.json"
        script.write_text(json.dumps(self.replies()), encoding="utf-8")
        return RunSpec(request=request, model=f"scripted:{script}", tools=tools,
                       workspace=str(self.folder))  # fmt: skip

    def attempts(self) -> list[str]:
        path = Path(f"{self.out}.attempts")
        return path.read_text("utf-8").splitlines() if path.exists() else []

    def forget_effects(self) -> None:
        """Remove what the embedded run wrote, before the same run on Temporal."""
        for suffix in ("", ".attempts", ".hung", ".go"):
            Path(f"{self.out}{suffix}").unlink(missing_ok=True)

    def hung_in(self) -> int | None:
        """The pid the tool wrote when it hung (kinds once and idempotent)."""
        text = Path(f"{self.out}.hung").read_text() if Path(f"{self.out}.hung").exists() else ""
        return int(text) if text else None


async def run_embedded(trials: list[Trial], url: str) -> None:
    """Each trial's run on the embedded engine: the transcript the Temporal run must match."""
    runtime = Runtime()
    for trial in trials:
        result = await runtime.start(trial.spec(url)).wait()
        assert result.status == "completed", result
        assert trial.out.read_text().splitlines() == trial.lines()
        trial.embedded = [event_to_dict(e) for e in runtime.store.events(result.run_id)]
        trial.forget_effects()


async def until(done: Callable[[], bool], what: Callable[[], str], limit_s: float) -> None:
    """Poll a real signal (a file the tool wrote, a call the provider holds), bounded."""
    deadline = time.monotonic() + limit_s
    while not done():
        assert time.monotonic() < deadline, what()
        await asyncio.sleep(0.05)


class HeldLink:
    """A TCP proxy on loopback between one worker and the Temporal server. `hold()` stops
    passing bytes either way (the worker's reports to Temporal wait); `cut()` then closes
    its connections without passing what waits, so the server drops the worker's pending
    polls (a proxy kept open would leave them there, and tasks given to them would be lost
    until their timeout)."""

    def __init__(self, target: str) -> None:
        self.host, port = target.rsplit(":", 1)
        self.port = int(port)
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.server: asyncio.Server | None = None
        self.links: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._link, "127.0.0.1", 0)
        return f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    def hold(self) -> None:
        self.flowing.clear()

    async def cut(self) -> None:
        for task in self.links:
            task.cancel()
        await asyncio.gather(*self.links, return_exceptions=True)

    async def close(self) -> None:
        await self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.links.add(task)
        up_writer: asyncio.StreamWriter | None = None
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        except (asyncio.CancelledError, ConnectionError):
            pass  # cut, or the worker or the server went away
        finally:
            for end in (writer, up_writer):
                if end is not None:
                    end.transport.abort()  # nothing that waits is passed on

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            await self.flowing.wait()
            writer.write(data)
            await writer.drain()


class ScriptProvider(ThreadingHTTPServer):
    """Answers each request from its trial's script (the trial named in the user message,
    the reply numbered by the assistant messages so far): the same request gets the same
    reply. While `armed`, a trial's model call `at` hangs the first time (until the end)."""

    scripts: dict[str, list[str]]
    kill_at: dict[str, int]
    armed: bool
    hung: dict[str, int]
    """trial key -> the client port of its hanging call."""
    bodies: dict[str, list[dict[str, Any]]]
    """trial key -> the requests it got, in order (while armed)."""
    lock: threading.Lock
    release: threading.Event


class _Handler(BaseHTTPRequestHandler):
    server: ScriptProvider

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body["messages"]
        user = next(m["content"] for m in messages if m["role"] == "user")
        found = TRIAL_MARK.search(str(user))
        assert found is not None, user
        key, step = found.group(0), sum(m["role"] == "assistant" for m in messages)
        with self.server.lock:
            if self.server.armed:
                self.server.bodies.setdefault(key, []).append(body)
            hang = (
                self.server.armed
                and self.server.kill_at.get(key) == step + 1
                and key not in self.server.hung
            )
            if hang:
                self.server.hung[key] = self.client_address[1]
        if hang:
            self.server.release.wait(300)
            return
        data = json.dumps(completion(self.server.scripts[key][step])).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def script_provider() -> Iterator[ScriptProvider]:
    server = ScriptProvider(("127.0.0.1", 0), _Handler)
    server.scripts, server.kill_at, server.hung, server.bodies = {}, {}, {}, {}
    server.armed, server.lock, server.release = False, threading.Lock(), threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def socket_owner(port: int, pids: list[int]) -> int | None:
    """Which of `pids` holds the TCP socket whose local port is `port` (Linux /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError):
            for line in Path(table).read_text().splitlines()[1:]:
                columns = line.split()
                if int(columns[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{columns[9]}]")
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd) in inodes:
                    return pid
    return None
