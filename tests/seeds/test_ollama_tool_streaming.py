"""Ollama tool calling is sent whole (`stream: false`) by default, streamed on request
(issue 34, item 3). A real HTTP server on loopback plays Ollama's `/api/chat`: one JSON body
for `stream: false`, NDJSON lines for `stream: true`, and keeps every request body.

Seed 003's lines held here:

- "2. Call Ollama `/api/chat` with `messages[]` + `tools[]` + `stream: false`"
- "**`stream: false` for tool calling** — simplifies parsing, avoids Ollama streaming bugs"
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from loopwright.agent import AgentExecutor
from loopwright.events import Event, ModelTextDeltaEvent
from loopwright.models import OllamaModel, RetryPolicy, resolve_model
from loopwright.tools import tool


@tool(effect="read")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CALL = {"role": "assistant", "content": "", "tool_calls": [
    {"function": {"name": "add", "arguments": {"a": 17, "b": 25}}}
]}  # fmt: skip
ANSWER = {"role": "assistant", "content": "17 + 25 is 42."}


class ChatServer(ThreadingHTTPServer):
    bodies: list[dict[str, Any]]
    messages: list[dict[str, Any]]


class Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        message = self.server.messages.pop(0)
        done = {"done": True, "done_reason": "stop", "prompt_eval_count": 9, "eval_count": 3}
        if body.get("stream"):  # NDJSON: the text in two pieces, then the end
            text = message.get("content") or ""
            half = len(text) // 2
            lines = [
                {"message": {**message, "content": text[:half]}, "done": False},
                {"message": {"role": "assistant", "content": text[half:]}, "done": False},
                {"message": {"role": "assistant", "content": ""}, **done},
            ]
            data = b"".join((json.dumps(line) + "\n").encode() for line in lines)
            kind = "application/x-ndjson"
        else:
            data, kind = json.dumps({"message": message, **done}).encode(), "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ChatServer]:
    chat = ChatServer(("127.0.0.1", 0), Handler)
    chat.bodies, chat.messages = [], []
    thread = threading.Thread(target=chat.serve_forever, daemon=True)
    thread.start()
    yield chat
    chat.shutdown()
    chat.server_close()
    thread.join()


def model(server: ChatServer, **options: Any) -> OllamaModel:
    url = f"http://127.0.0.1:{server.server_address[1]}"
    retry = RetryPolicy(max_retries=0)
    return OllamaModel("qwen3", base_url=url, tool_mode="native", retry=retry, **options)


async def listened_run(agent: AgentExecutor) -> tuple[Any, list[Event]]:
    events: list[Event] = []
    return await agent.run("What is 17 + 25?", on_event=events.append), events


async def test_a_call_that_offers_tools_is_sent_whole_even_when_someone_listens(
    server: ChatServer,
) -> None:
    """Seed 003: "**`stream: false` for tool calling**". A listened run (it would stream)
    sends both tool-offering calls with `stream: false`; the run reads the native call."""
    server.messages += [CALL, ANSWER]
    result, events = await listened_run(AgentExecutor(model(server), [add]))
    assert (result.status, result.answer) == ("completed", "17 + 25 is 42.")
    assert [b["stream"] for b in server.bodies] == [False, False]
    assert all(b["tools"][0]["function"]["name"] == "add" for b in server.bodies)
    assert result.steps[0].result == "42"
    assert not any(isinstance(e, ModelTextDeltaEvent) for e in events)


async def test_stream_tools_streams_tool_calls_on_request(server: ChatServer) -> None:
    """The option to stream (Ollama 0.8.0 and later stream tool calls correctly)."""
    server.messages += [CALL, ANSWER]
    result, events = await listened_run(AgentExecutor(model(server, stream_tools=True), [add]))
    assert result.answer == "17 + 25 is 42." and result.steps[0].result == "42"
    assert [b["stream"] for b in server.bodies] == [True, True]
    deltas = "".join(e.text for e in events if isinstance(e, ModelTextDeltaEvent))
    assert deltas == "17 + 25 is 42."


async def test_a_call_without_tools_still_streams(server: ChatServer) -> None:
    """Only tool calling is sent whole: a run with no tool streams its reply as before."""
    server.messages.append(ANSWER)
    result, _ = await listened_run(AgentExecutor(model(server), []))
    assert result.answer == "17 + 25 is 42."
    assert server.bodies[0]["stream"] is True and "tools" not in server.bodies[0]


async def test_stream_true_on_the_model_still_sends_tool_calls_whole(server: ChatServer) -> None:
    server.messages += [CALL, ANSWER]
    result = await AgentExecutor(model(server, stream=True), [add]).run("What is 17 + 25?")
    assert result.answer == "17 + 25 is 42."
    assert [b["stream"] for b in server.bodies] == [False, False]


def stream_tools_of(spec: str) -> bool:
    model = resolve_model(spec)
    assert isinstance(model, OllamaModel)
    return model.stream_tools


def test_the_cli_factory_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert stream_tools_of("ollama:qwen3") is False
    monkeypatch.setenv("LOOPWRIGHT_OLLAMA_STREAM_TOOLS", "1")
    assert stream_tools_of("ollama:qwen3") is True
