"""llama.cpp's own `llama-server --jinja` (built by `make eval-compare`, which runs these
first: `make test` does not build it, and skips them without it) with the embedded
GGUF (Qwen2.5-Coder-1.5B-Instruct). Its Jinja template tells the model to write calls in
`<tool_call>` tags, which the server parses into `tool_calls`:
this small model writes the call as a fenced JSON block instead (measured: four different
requests with `tool_choice: "auto"`, each time; `"required"` too), so the server returns it
as text, as llama-cpp-python's server does. A framework that reads only
  `tool_calls` takes that text for the answer; loopwright's parser chain reads the call.
The peer comparison (bench/eval_compare.py) runs on this server too."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from loopwright._ports import server_port
from loopwright.messages import Message, ModelRequest, ModelResponse
from loopwright.models import OpenAIModel, RetryPolicy
from loopwright.parsing import ParsedAction, parse_reply
from model_server import model_threads, packaged_model

LLAMA_SERVER = Path("~/.cache/loopwright/bin/portable-avx2/llama-server-0.3.36").expanduser()
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(
        not LLAMA_SERVER.is_file(), reason=f"no {LLAMA_SERVER}: `make eval-compare` builds it"
    ),
]
START_LIMIT_S = 300
CALL_LIMIT_S = 900
ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two numbers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
}
QUESTION = "What is 17 + 25? Use the add tool."
MAX_TOKENS = 120
"""Bounds each reply: the call is ~40 tokens; unbounded, a prose reply ran for minutes."""


def free_port() -> int:
    """A port for the server to bind, drawn where the kernel hands out none to others."""
    return server_port()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    threads = str(model_threads())
    command = [
        str(LLAMA_SERVER), "--model", str(packaged_model()), "--jinja",
        "--host", "127.0.0.1", "--port", str(port), "--threads", threads,
        "--threads-batch", threads, "--ctx-size", "4096", "--parallel", "1",
        "--no-repack", "--alias", "qwen", "--no-webui",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_LIMIT_S
        while True:
            assert process.poll() is None, f"llama-server exited with {process.returncode}"
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"llama-server did not answer at {url}"
            time.sleep(0.5)  # polling a condition with a deadline
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def chat(server: str, tool_choice: str) -> dict[str, Any]:
    body = {
        "model": "qwen",
        "messages": [{"role": "user", "content": QUESTION}],
        "tools": [ADD],
        "tool_choice": tool_choice,
        "temperature": 0,
        "max_tokens": MAX_TOKENS,
    }
    reply = httpx.post(f"{server}/chat/completions", json=body, timeout=CALL_LIMIT_S)
    assert reply.status_code == 200, reply.text
    choice: dict[str, Any] = reply.json()["choices"][0]
    return choice


def test_tool_choice_auto_the_call_is_read_either_way(server: str) -> None:
    """`tool_calls` if the model used the template's tags; otherwise loopwright's parser
    chain reads the call from the text (this model writes a fenced JSON block)."""
    choice = chat(server, "auto")
    message = choice["message"]
    if message.get("tool_calls"):
        (call,) = message["tool_calls"]
        found = (call["function"]["name"], json.loads(call["function"]["arguments"]))
    else:
        assert choice["finish_reason"] == "stop"
        outcome = parse_reply(ModelResponse(text=message["content"]))
        assert isinstance(outcome, ParsedAction), (outcome, message)
        found = (outcome.calls[0].name, outcome.calls[0].arguments)
    assert found == ("add", {"a": 17, "b": 25})


async def test_the_openai_adapter_reads_the_prompt_cache(server: str) -> None:
    model = OpenAIModel(
        "qwen",
        base_url=server,
        tool_mode="prompted",
        retry=RetryPolicy(max_retries=0),
        timeout=CALL_LIMIT_S,
    )
    request = ModelRequest(
        messages=(Message.user(QUESTION),), temperature=0.0, max_output_tokens=MAX_TOKENS
    )
    first = await model.complete(request)
    again = await model.complete(request)  # the same prompt: served from the slot's cache
    assert again.text == first.text
    assert again.usage.input_tokens == first.usage.input_tokens > 0
    assert 0 < again.usage.cached_input_tokens < again.usage.input_tokens
