"""llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with the embedded model, started
once per test session (the `llama_server` fixture in conftest.py: it loads 1 GB and takes
a while on 2 cores). CPU heavy: its tests carry the `model` marker."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

MAIN = Path(__file__).parent / "features" / "llama_server_main.py"
START_LIMIT_S = 300


@dataclass(frozen=True)
class LlamaServer:
    url: str
    """The OpenAI-compatible base URL (…/v1)."""
    pid: int
    """The server's process (its CPU time is read from /proc by a test)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_llama_server() -> tuple[LlamaServer, subprocess.Popen[bytes]]:
    """Start the server and wait until it answers (within START_LIMIT_S)."""
    from loopwright.models._local import resolve_local_path
    from loopwright.models._local_spec import default_threads

    port = free_port()
    command = [
        sys.executable, str(MAIN), "--model", str(resolve_local_path("")),
        "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", str(default_threads()), "--n_ctx", "8192",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_serving(url, process)
    except BaseException:
        stop(process)
        raise
    return LlamaServer(url, process.pid), process


def _wait_until_serving(url: str, process: subprocess.Popen[bytes]) -> None:
    """Poll the server's model list until it answers (it loads 1 GB first)."""
    deadline = time.monotonic() + START_LIMIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)  # polling a condition with a deadline, not synchronising on a guess
    raise RuntimeError(f"llama.cpp server did not answer at {url} within {START_LIMIT_S}s")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
