"""Helpers of the kill trials: the trials' scripted runs, an OpenAI-compatible provider that
answers many runs at once from their scripts (and hangs once where a trial says), and which
worker process holds a loopback connection (Linux /proc)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from run_tools import KILL_MARK
from temporal_helpers import action, completion, final

from loopwright.runtime import RunSpec

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
        for path in (self.out, Path(f"{self.out}.attempts"), Path(f"{self.out}.hung")):
            path.unlink(missing_ok=True)

    def hung_in(self) -> int | None:
        """The pid the tool wrote when it hung (kinds once and idempotent)."""
        text = Path(f"{self.out}.hung").read_text() if Path(f"{self.out}.hung").exists() else ""
        return int(text) if text else None


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
