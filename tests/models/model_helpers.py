"""Helpers for the HTTP adapter tests: a recording MockTransport (the outside world) and
recorded exchanges in each provider's wire format (tests/fixtures/exchanges/)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from loopwright.messages import ToolSpec
from loopwright.models import AnthropicModel, OllamaModel, OpenAIModel

HttpAdapter = OpenAIModel | OllamaModel | AnthropicModel


EXCHANGES = Path(__file__).parent.parent / "fixtures" / "exchanges"
OPENAI_KEY = "sk-test-OPENAI-abcdefghijklmnop0123456789"
ANTHROPIC_KEY = "sk-ant-api03-test-ANTHROPIC-abcdefghijklmnop"

_NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
TOOL_SPECS = {
    "add": ToolSpec("add", "Add two integers.", _NUMBERS),
    "multiply": ToolSpec("multiply", "Multiply two integers.", _NUMBERS),
}

Reply = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


class Wire:
    """Serves the given replies in order (a response, an exception to raise, or a function
    of the request) and keeps every request it received."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if callable(reply) and not isinstance(reply, httpx.Response):
            return reply(request)
        return reply

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


class Sleeps:
    """An injected sleep that records the wait instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class CutStream(httpx.AsyncByteStream):
    """A body that sends `chunks` and then loses the connection."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        raise httpx.RemoteProtocolError("peer closed connection without sending complete body")


def make_model(provider: str, wire: Wire, **options: Any) -> HttpAdapter:
    """An adapter talking to `wire`, with sleeps recorded and no jitter."""
    options.setdefault("transport", wire.transport)
    options.setdefault("sleep", Sleeps())
    options.setdefault("jitter", lambda: 0.0)
    if provider == "openai":
        options.setdefault("api_key", OPENAI_KEY)
        return OpenAIModel(options.pop("model", "gpt-4.1-mini"), **options)
    if provider == "anthropic":
        options.setdefault("api_key", ANTHROPIC_KEY)
        return AnthropicModel(options.pop("model", "claude-sonnet-4-5"), **options)
    if provider == "ollama":
        options.setdefault("base_url", "http://localhost:11434")
        if options.get("stream"):  # the recorded streams include tool calls
            options.setdefault("stream_tools", True)
        return OllamaModel(options.pop("model", "qwen3:8b"), **options)
    raise ValueError(provider)


def sleeps_of(model: HttpAdapter) -> list[float]:
    return model.client.waits


def json_reply(data: Any, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=data, headers=headers)


def file_reply(name: str, content_type: str, status: int = 200) -> httpx.Response:
    body = (EXCHANGES / name).read_bytes()
    return httpx.Response(status, content=body, headers={"content-type": content_type})


def mismatches(expected: Any, actual: Any, where: str = "$") -> list[str]:
    """Where `actual` differs from `expected`; objects may have more keys than expected."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r}"]
        problems: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                problems.append(f"{where}.{key}: missing")
            else:
                problems += mismatches(value, actual[key], f"{where}.{key}")
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {len(expected)} items, got {actual!r}"]
        problems = []
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            problems += mismatches(want, got, f"{where}[{index}]")
        return problems
    return [] if expected == actual else [f"{where}: expected {expected!r}, got {actual!r}"]


def load_cases(provider: str) -> list[Any]:
    data = json.loads((EXCHANGES / f"{provider}.json").read_text(encoding="utf-8"))
    return [pytest.param(provider, case, id=f"{provider}-{case['name']}") for case in data["cases"]]
