"""llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with the embedded model, started
once per test session (the `llama_server` fixture in conftest.py: it loads 1 GB and takes
a while on 2 cores). CPU heavy: its tests carry the `model` marker."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from loopwright._ports import server_port

MAIN = Path(__file__).parent / "features" / "llama_server_main.py"
START_LIMIT_S = 300


@dataclass(frozen=True)
class LlamaServer:
    url: str
    """The OpenAI-compatible base URL (…/v1)."""
    pid: int
    """The server's process (its CPU time is read from /proc by a test)."""


def free_port() -> int:
    """A port for the server to bind, drawn where the kernel hands out none to others
    (it binds it only once the model is loaded: a minute on a loaded machine)."""
    return server_port()


def packaged_model() -> Path:
    """The embedded model's GGUF file (`--model local`), for a server of its own."""
    from loopwright.models._local import resolve_local_path

    return resolve_local_path("")


def model_threads() -> int:
    """The threads a server of the embedded model runs on: LOOPWRIGHT_LOCAL_THREADS, else
    the physical cores (a server fixes its count; the embedded model chooses per call)."""
    from loopwright.models._local_spec import default_threads

    return default_threads()


def start_llama_server() -> tuple[LlamaServer, subprocess.Popen[bytes]]:
    """Start the server and wait until it answers (within START_LIMIT_S); its output goes
    to a log that an error quotes (deleted once it is up)."""
    port = free_port()
    command = [
        sys.executable, str(MAIN), "--model", str(packaged_model()),
        "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", str(model_threads()), "--n_ctx", "8192",
    ]  # fmt: skip
    with tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False) as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    log = Path(out.name)
    try:
        _wait_until_serving(port, process, log)
    except BaseException:
        stop(process)
        raise
    log.unlink()
    return LlamaServer(f"http://127.0.0.1:{port}/v1", process.pid), process


def _wait_until_serving(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    """Poll until this server says it listens on `port` (not another one there) and its
    model list answers (it loads 1 GB first)."""
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + START_LIMIT_S
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if process.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited with {process.returncode}: {text[-2000:]}")
        try:
            if (
                f"running on {url[:-3]}" in text
                and httpx.get(f"{url}/models", timeout=2).is_success
            ):
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)  # polling a condition with a deadline, not synchronising on a guess
    raise RuntimeError(
        f"llama.cpp server did not answer at {url} within {START_LIMIT_S}s; its log: {log}"
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
