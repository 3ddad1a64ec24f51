"""`loopwright serve` on a real port: a run's deltas reach an SSE client and a WebSocket
client as they are generated, between the stored events, and the stored page has none."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_helpers import LiveServer, live_server, make_config, sse_events, start_run, ws_connect

from loopwright.messages import ModelRequest, ModelResponse, Usage
from loopwright.models import ModelRegistry, TextSink

REPLY = '{"thought": "counting the lines one by one", "final_answer": "seven lines"}'


class WaitingModel:
    """Streams its reply in words once the test says `start` (after it has subscribed)."""

    name = "waiting"
    preferred_tool_mode: Literal["prompted"] = "prompted"

    def __init__(self) -> None:
        self.start = threading.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text=REPLY, usage=Usage(10, 5))

    async def complete_streaming(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        await asyncio.to_thread(self.start.wait, 30)
        for word in REPLY.split(" "):
            on_text(word + " ")
            await asyncio.sleep(0.06)  # a model's pace: each word its own delta
        return ModelResponse(text=REPLY, usage=Usage(10, 5))


@pytest.fixture
def waiting() -> Iterator[WaitingModel]:
    model = WaitingModel()
    yield model
    model.start.set()


@pytest.fixture
def server(tmp_path: Path, waiting: WaitingModel) -> Iterator[LiveServer]:
    models = ModelRegistry().with_factory("waiting", lambda _name, _url: waiting)
    config = make_config(tmp_path, models=models)
    config = dataclasses.replace(config, allowed_models=config.allowed_models | {"waiting:x"})
    with live_server(config) as live:
        yield live


def check(events: list[dict[str, Any]]) -> None:
    types = [e["type"] for e in events]
    deltas = [e for e in events if e["type"] == "model_text_delta"]
    assert len(deltas) >= 2  # paced words: more than one delta (coalescing may join some)
    assert "".join(d["text"] for d in deltas).strip() == REPLY
    first = types.index("model_text_delta")
    assert types[first - 1] == "iteration_started"
    assert types[len(types) - types[::-1].index("model_text_delta")] == "model_response"
    assert {d["seq"] for d in deltas} == {events[first - 1]["seq"]}


def test_sse_carries_the_deltas(server: LiveServer, waiting: WaitingModel) -> None:
    run_id = start_run(server, {"prompt": "count", "model": "waiting:x"})["run_id"]
    events: list[dict[str, Any]] = []
    url = f"{server.url}/api/runs/{run_id}/events"
    headers = {"Accept": "text/event-stream"}
    with httpx.stream("GET", url, headers=headers, timeout=20) as response:
        for _ident, data, name in sse_events(response):
            if name == "end":
                break
            events.append(json.loads(data))
            waiting.start.set()  # subscribed: the run_started it got was read after that
    check(events)
    stored = httpx.get(url).json()["events"]
    assert [e["type"] for e in stored] == [
        e["type"] for e in events if e["type"] != "model_text_delta"
    ]


def test_websocket_carries_the_deltas(server: LiveServer, waiting: WaitingModel) -> None:
    from websockets.exceptions import ConnectionClosedOK

    run_id = start_run(server, {"prompt": "count", "model": "waiting:x"})["run_id"]
    events: list[dict[str, Any]] = []
    with ws_connect(server, run_id) as ws:
        try:
            while True:
                events.append(json.loads(ws.recv(timeout=20)))
                waiting.start.set()
        except ConnectionClosedOK:
            pass
    check(events)
