"""A server that reports no usage (llama-cpp-python's, streaming): the adapter counts the
tokens itself (~4 characters a token), so reports and budgets do not read zero."""

from __future__ import annotations

import json
from typing import Any

import httpx
from model_helpers import Wire, json_reply, make_model

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.events import Event
from loopwright.messages import Message, ModelRequest, Usage
from loopwright.tools import tool


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def stream_without_usage(content: str) -> httpx.Response:
    """An SSE reply as llama-cpp-python's server sends it: no usage chunk at all."""
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": content}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


def local_model(wire: Wire) -> Any:
    return make_model("openai", wire, base_url="http://127.0.0.1:8080/v1", model="qwen")


async def test_a_stream_without_usage_is_counted_from_its_characters() -> None:
    reply = "x" * 400
    model = local_model(Wire(stream_without_usage(reply)))
    request = ModelRequest(messages=(Message.system("s" * 780), Message.user("u" * 780)))
    response = await model.complete_streaming(request, lambda piece: None)
    assert response.text == reply
    assert response.usage == Usage((780 + 16) * 2 // 4, 400 // 4)


async def test_reported_usage_is_kept_as_reported() -> None:
    message = {"role": "assistant", "content": "x" * 400}
    usage = {"prompt_tokens": 7, "completion_tokens": 3}
    wire = Wire(json_reply({"choices": [{"message": message}], "usage": usage}))
    response = await local_model(wire).complete(ModelRequest(messages=(Message.user("hi"),)))
    assert response.usage == Usage(7, 3)


async def test_a_token_budget_stops_a_run_on_a_server_that_reports_no_usage() -> None:
    action = json.dumps({"action": "add", "action_input": {"a": 1, "b": 2}, "thought": "t"})
    wire = Wire(*(stream_without_usage(action) for _ in range(20)))
    events: list[Event] = []

    async def see(event: Event) -> None:  # a listener: the calls stream
        events.append(event)

    options = AgentOptions(
        max_tokens_total=6_000, max_iterations=20, repetition_threshold=50, no_progress_limit=50
    )
    result = await AgentExecutor(local_model(wire), [add], options=options).run(
        "add forever", on_event=see
    )
    assert result.status == "stopped" and result.reason == "budget", result
    assert 0 < result.usage.total_tokens <= 6_000
    assert len(wire.requests) < 20  # stopped by the count, not by the end of the replies
