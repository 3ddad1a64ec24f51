"""Ollama: native `tools[]` on `/api/chat` by default for models whose template supports
tools, the prompted format otherwise, chosen per model from `/api/show` and recorded in the
run. A real HTTP server on loopback serves recorded `/api/show` and `/api/chat` replies."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from model_helpers import EXCHANGES

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.events import Event, RunStartedEvent
from loopwright.models import OllamaModel
from loopwright.runtime import RunSpec, Runtime
from loopwright.testing import InMemoryRunStore
from loopwright.tools import tool

SHOW = {c["model"]: c for c in json.loads((EXCHANGES / "ollama_show.json").read_text())["cases"]}
CHAT = {c["name"]: c for c in json.loads((EXCHANGES / "ollama.json").read_text())["cases"]}
ODD_SHOW: dict[str, Any] = {
    "completion-only:1b": {"capabilities": ["completion"]},
    "plain-template:1b": {"template": "{{ .Prompt }}"},
    "list-reply:1b": [],
}
"""/api/show replies that name no tool support, by a model name of their own."""


@tool(effect="read")
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class FakeOllama(ThreadingHTTPServer):
    requests: list[tuple[str, dict[str, Any]]]
    chat_replies: list[dict[str, Any]]


class Handler(BaseHTTPRequestHandler):
    server: FakeOllama

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, body))
        if self.path == "/api/show":
            case = SHOW.get(body["model"])
            status, reply = (200, case["reply"]) if case else (404, {"error": "model not found"})
            if body["model"] in ODD_SHOW:
                status, reply = 200, ODD_SHOW[body["model"]]
        elif self.path == "/api/chat" and self.server.chat_replies:
            status, reply = 200, self.server.chat_replies.pop(0)
        else:
            status, reply = 500, {"error": f"unexpected {self.path}"}
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    server = FakeOllama(("127.0.0.1", 0), Handler)
    server.requests, server.chat_replies = [], []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def url(server: FakeOllama) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


async def run_recorded(agent: AgentExecutor, request: str) -> tuple[Any, list[Event]]:
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    return await agent.run(request, on_event=sink), events


async def test_a_model_with_tools_gets_native_tool_calls(ollama: FakeOllama) -> None:
    ollama.chat_replies = [
        CHAT["native_tool_call"]["reply"]["json"],
        CHAT["tool_result_then_final"]["reply"]["json"],
    ]
    model = OllamaModel("qwen3:8b", base_url=url(ollama))
    agent = AgentExecutor(model, [add])
    result, events = await run_recorded(agent, "What is 17 + 25?")

    assert (result.status, result.answer) == ("completed", "17 + 25 = 42.")
    assert [(s.tool_name, s.arguments, s.result) for s in result.steps] == [
        ("add", {"a": 17, "b": 25}, "42")
    ]
    paths = [path for path, _ in ollama.requests]
    assert paths == ["/api/show", "/api/chat", "/api/chat"]  # asked once per model
    first, second = (body for path, body in ollama.requests if path == "/api/chat")
    assert [t["function"]["name"] for t in first["tools"]] == ["add"]
    tool_turn = (
        second["messages"][-1]
        if second["messages"][-1]["role"] == "tool"
        else second["messages"][-2]
    )
    assert (tool_turn["role"], tool_turn["tool_name"]) == ("tool", "add")
    assert tool_turn["content"].startswith("42")
    started = events[0]
    assert isinstance(started, RunStartedEvent)
    assert started.options["tool_mode"] == "native"
    assert started.options["tool_mode_reason"] == "the model's capabilities include tools"
    assert "tool-calling interface" in first["messages"][0]["content"]


async def test_a_model_without_tools_gets_the_prompted_format(ollama: FakeOllama) -> None:
    action = {"thought": "add them", "action": "add", "action_input": {"a": 17, "b": 25}}
    ollama.chat_replies = [
        {
            "model": "gemma3:4b",
            "message": {"role": "assistant", "content": json.dumps(action)},
            "done": True,
        },
        CHAT["prompted_history"]["reply"]["json"],
    ]
    model = OllamaModel("gemma3:4b", base_url=url(ollama))
    result, events = await run_recorded(AgentExecutor(model, [add]), "What is 17 + 25?")

    assert (result.status, result.answer) == ("completed", "42")
    chats = [body for path, body in ollama.requests if path == "/api/chat"]
    assert all("tools" not in body for body in chats)
    assert "EXECUTION FORMAT" in chats[0]["messages"][0]["content"]
    assert chats[1]["messages"][-1]["content"].startswith(
        "Observation from add (add two integers): 42"
    )
    started = events[0]
    assert isinstance(started, RunStartedEvent) and started.options["tool_mode"] == "prompted"
    assert "lack tools" in started.options["tool_mode_reason"]


def test_each_model_is_asked_once_and_chosen_on_its_own(ollama: FakeOllama) -> None:
    base = url(ollama)
    modes = {name: OllamaModel(name, base_url=base).preferred_tool_mode for name in SHOW}
    assert modes == {name: case["expect"] for name, case in SHOW.items()}
    again = OllamaModel("qwen3:8b", base_url=base)
    assert again.preferred_tool_mode == "native"
    assert [body["model"] for _, body in ollama.requests] == list(SHOW)  # the cache answered
    older = OllamaModel("llama3.1:8b", base_url=base)
    assert older.preferred_tool_mode == "native"
    assert older.tool_mode_reason == "the model's template renders tools (.Tools)"


def test_an_unknown_model_or_an_unreachable_server_falls_back_to_prompted(
    ollama: FakeOllama,
) -> None:
    missing = OllamaModel("nosuch:1b", base_url=url(ollama))
    assert missing.preferred_tool_mode == "prompted"
    assert missing.tool_mode_reason == "/api/show answered HTTP 404"
    port = ollama.server_address[1]
    ollama.shutdown()
    ollama.server_close()
    gone = OllamaModel("qwen3:8b", base_url=f"http://127.0.0.1:{port}")
    assert gone.preferred_tool_mode == "prompted"
    assert "could not be read" in (gone.tool_mode_reason or "")


def test_a_given_tool_mode_asks_nothing(ollama: FakeOllama) -> None:
    model = OllamaModel("qwen3:8b", base_url=url(ollama), tool_mode="prompted")
    assert model.preferred_tool_mode == "prompted"
    agent = AgentExecutor(model, [add], options=AgentOptions())
    assert agent.tool_mode == "prompted" and ollama.requests == []


async def test_a_run_from_its_spec_records_the_chosen_mode(ollama: FakeOllama) -> None:
    """As `loopwright run --model ollama:qwen3:8b` runs it: from a RunSpec, on a Runtime."""
    ollama.chat_replies = [CHAT["tool_result_then_final"]["reply"]["json"]]
    spec = RunSpec(request="What is 17 + 25?", model="ollama:qwen3:8b", base_url=url(ollama))
    store = InMemoryRunStore()
    runtime = Runtime(store)
    try:
        result = await runtime.start(spec, run_id="run_spec").wait()
    finally:
        runtime.close()
    assert result.status == "completed"
    started = store.events("run_spec")[0]
    assert isinstance(started, RunStartedEvent) and started.options["tool_mode"] == "native"


@pytest.mark.parametrize("name", sorted(ODD_SHOW))
def test_a_show_reply_that_names_no_tool_support_means_prompted(
    ollama: FakeOllama, name: str
) -> None:
    model = OllamaModel(name, base_url=url(ollama))
    assert model.preferred_tool_mode == "prompted", model.tool_mode_reason
    assert [body["model"] for _, body in ollama.requests] == [name]  # it was asked
