"""Structured output for real: llama.cpp's OpenAI-compatible server on 127.0.0.1 (the
schema sent as `response_format`, turned into a grammar by the server) and the embedded
model (the grammar built in-process). CPU heavy: marked `model`."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel

from loopwright import AgentExecutor, AgentOptions
from loopwright.models import OpenAIModel, RetryPolicy
from loopwright.models._local import LocalModel, resolve_local_path
from loopwright.models._local_spec import default_threads

pytestmark = pytest.mark.model
START_LIMIT_S = 300
CALL_LIMIT_S = 900


class Person(BaseModel):
    name: str
    age: int
    city: str


REQUEST = "Alice Martin is 34 and lives in Lyon. Extract the person."


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    port = _free_port()
    command = [
        sys.executable, str(Path(__file__).parent / "llama_server_main.py"),
        "--model", str(resolve_local_path("")),
        "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", str(default_threads()), "--n_ctx", "4096",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_LIMIT_S
        while True:
            assert process.poll() is None, f"llama.cpp server exited with {process.returncode}"
            assert time.monotonic() < deadline, "llama.cpp server did not start in time"
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)  # polling a condition with a deadline
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


async def test_llama_server_returns_a_valid_object(llama_server: str) -> None:
    model = OpenAIModel(
        "qwen", base_url=llama_server, retry=RetryPolicy(max_retries=0), timeout=CALL_LIMIT_S
    )
    options = AgentOptions(output_retries=0, max_iterations=1)
    result = await AgentExecutor(model, output_type=Person, options=options).run(REQUEST)
    person = result.output_as(Person)
    assert person.age == 34 and "Lyon" in person.city and "Alice" in person.name


async def test_embedded_model_grammar_returns_a_valid_object() -> None:
    model = LocalModel(resolve_local_path(""), threads=default_threads())
    options = AgentOptions(output_retries=0, max_iterations=1)
    result = await AgentExecutor(model, output_type=Person, options=options).run(REQUEST)
    assert result.output_as(Person).age == 34
