"""Recorded exchanges in each provider's documented wire format, replayed through
httpx.MockTransport: the request body we send, and the ModelResponse we read back."""

from __future__ import annotations

from typing import Any

import pytest
from model_helpers import (
    TOOL_SPECS,
    Wire,
    file_reply,
    json_reply,
    load_cases,
    make_model,
    mismatches,
)

from loopwright.messages import Message, ModelRequest

CASES = load_cases("openai") + load_cases("anthropic") + load_cases("ollama")
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "ollama": "/api/chat"}


def _request(case: dict[str, Any]) -> ModelRequest:
    spec = case["request"]
    return ModelRequest(
        messages=tuple(Message.from_dict(m) for m in spec["messages"]),
        tools=tuple(TOOL_SPECS[name] for name in spec["tools"]),
        temperature=0.0,
        max_output_tokens=256,
    )


@pytest.mark.parametrize(("provider", "case"), CASES)
async def test_recorded_exchange(provider: str, case: dict[str, Any]) -> None:
    reply = case["reply"]
    if "file" in reply:
        response = file_reply(reply["file"], reply["content_type"], reply["status"])
    else:
        response = json_reply(reply["json"], reply["status"])
    wire = Wire(response)
    streamed: list[str] = []
    options: dict[str, Any] = {"stream": case["stream"], "on_text": streamed.append}
    for key in ("base_url", "model", "tool_mode"):
        if key in case:
            options[key] = case[key]
    model = make_model(provider, wire, **options)

    response_read = await model.complete(_request(case))

    (sent,) = wire.bodies
    assert wire.requests[0].url.path == PATHS[provider]
    assert mismatches(case["sent"], sent) == []
    for key in case.get("absent", []):
        assert key not in sent, f"{key} should not be sent"
    assert all(m.get("content") is not None for m in sent["messages"]), "content: null sent"
    expect = case["expect"]
    assert response_read.text == expect["text"]
    calls = [c.to_dict() for c in response_read.tool_calls]
    assert len(calls) == len(expect["tool_calls"])
    for got, want in zip(calls, expect["tool_calls"], strict=True):
        if want["id"] == "*":
            assert got["id"].startswith("call_")
            want = {**want, "id": got["id"]}
        assert got == want
    usage = response_read.usage
    assert [usage.input_tokens, usage.output_tokens] == expect["usage"]
    assert response_read.finish_reason == expect["finish_reason"]
    assert response_read.model == model.name
    if "streamed" in expect:
        assert streamed == expect["streamed"]
