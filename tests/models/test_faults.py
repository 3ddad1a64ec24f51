"""Fault injection through the transport: 5xx, 429 with Retry-After, timeouts, dropped and
truncated replies, refused keys. Waits go through an injected sleep, never the clock."""

from __future__ import annotations

import email.utils

import httpx
import pytest
from model_helpers import (
    ANTHROPIC_KEY,
    OPENAI_KEY,
    CutStream,
    Wire,
    file_reply,
    json_reply,
    make_model,
    sleeps_of,
)

from loopwright.errors import ModelError, ModelUnavailableError
from loopwright.messages import Message, ModelRequest
from loopwright.models import RetryPolicy

REQUEST = ModelRequest(messages=(Message.system("Be brief."), Message.user("What is 17 + 25?")))
OPENAI_FINAL = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "42"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 20, "completion_tokens": 1},
}
SSE = "text/event-stream"


async def test_a_500_is_retried_after_a_backoff() -> None:
    wire = Wire(json_reply({"error": {"message": "boom"}}, 500), json_reply(OPENAI_FINAL))
    model = make_model("openai", wire)
    response = await model.complete(REQUEST)
    assert response.text == "42"
    assert len(wire.requests) == 2
    assert sleeps_of(model) == [0.25]  # base 0.5 s, no jitter: half of it


async def test_persistent_5xx_backs_off_exponentially_then_names_provider_and_url() -> None:
    wire = Wire(*[json_reply({"error": "overloaded"}, 503) for _ in range(4)])
    model = make_model("openai", wire)
    with pytest.raises(ModelError) as caught:
        await model.complete(REQUEST)
    assert sleeps_of(model) == [0.25, 0.5, 1.0]
    assert len(wire.requests) == 4
    message = str(caught.value)
    assert "openai" in message and "https://api.openai.com/v1/chat/completions" in message
    assert "HTTP 503" in message and "4 attempts" in message
    assert caught.value.provider == "openai"
    assert caught.value.url == "https://api.openai.com/v1/chat/completions"


async def test_429_waits_exactly_what_retry_after_asks() -> None:
    limited = json_reply({"error": {"message": "Rate limit reached"}}, 429, **{"Retry-After": "7"})
    wire = Wire(limited, json_reply(OPENAI_FINAL))
    model = make_model("openai", wire)
    assert (await model.complete(REQUEST)).text == "42"
    assert sleeps_of(model) == [7.0]


async def test_429_retry_after_ms_and_http_date() -> None:
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 12, usegmt=True)
    wire = Wire(
        json_reply({}, 429, **{"retry-after-ms": "1500"}),
        json_reply({}, 429, **{"Retry-After": date}),
        json_reply(OPENAI_FINAL),
    )
    model = make_model("openai", wire, now=lambda: now)
    await model.complete(REQUEST)
    assert sleeps_of(model) == [1.5, 12.0]


async def test_a_retry_after_longer_than_we_wait_fails_at_once() -> None:
    wire = Wire(json_reply({"error": "slow down"}, 429, **{"Retry-After": "120"}))
    model = make_model("anthropic", wire)
    with pytest.raises(ModelError, match="asks to wait 120 s"):
        await model.complete(REQUEST)
    assert sleeps_of(model) == []
    assert len(wire.requests) == 1


def test_backoff_jitter_and_cap() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    assert policy.backoff(0, 0.0) == 0.5
    assert policy.backoff(0, 1.0) == 1.0
    assert policy.backoff(1, 0.5) == 1.5
    assert policy.backoff(10, 1.0) == 5.0


async def test_timeouts_are_retried_then_reported() -> None:
    timeouts = [httpx.ReadTimeout("timed out") for _ in range(3)]
    wire = Wire(*timeouts, json_reply(OPENAI_FINAL))
    model = make_model("openai", wire)
    assert (await model.complete(REQUEST)).text == "42"

    wire = Wire(*[httpx.ReadTimeout("timed out") for _ in range(2)])
    model = make_model("ollama", wire, timeout=30.0, retry=RetryPolicy(max_retries=1))
    with pytest.raises(ModelError, match=r"did not answer in time \(30.0 s, 2 attempts\)"):
        await model.complete(REQUEST)


async def test_ollama_not_running_says_ollama_serve() -> None:
    wire = Wire(*[httpx.ConnectError("[Errno 111] Connection refused") for _ in range(4)])
    model = make_model("ollama", wire)
    with pytest.raises(ModelUnavailableError) as caught:
        await model.complete(REQUEST)
    message = str(caught.value)
    assert "http://localhost:11434/api/chat" in message
    assert "ollama serve" in message and "Connection refused" in message
    assert caught.value.provider == "ollama"


async def test_ollama_unknown_model_says_ollama_pull() -> None:
    wire = Wire(json_reply({"error": "model 'qwen9:1b' not found"}, 404))
    model = make_model("ollama", wire, model="qwen9:1b")
    with pytest.raises(ModelError, match=r"not found .*ollama pull qwen9:1b"):
        await model.complete(REQUEST)
    assert len(wire.requests) == 1


@pytest.mark.parametrize(
    ("provider", "good", "cut"),
    [
        (
            "openai",
            "openai_stream_text.sse",
            b'data: {"choices":[{"index":0,"delta":{"content":"17',
        ),
        (
            "anthropic",
            "anthropic_stream_text.sse",
            b'event: message_start\ndata: {"type":"message_start","message":{"usage":{}}}\n\n',
        ),
        ("ollama", "ollama_stream_text.ndjson", b'{"message":{"content":"17"},"done":false}\n'),
    ],
)
async def test_a_connection_dropped_mid_stream_is_retried(
    provider: str, good: str, cut: bytes
) -> None:
    dropped = httpx.Response(200, stream=CutStream(cut), headers={"content-type": SSE})
    wire = Wire(dropped, file_reply(good, SSE))
    model = make_model(provider, wire, stream=True)
    response = await model.complete(REQUEST)
    assert response.text.endswith("42.")
    assert len(wire.requests) == 2 and len(sleeps_of(model)) == 1


async def test_a_stream_that_ends_early_is_retried_then_reported() -> None:
    early = b'data: {"choices":[{"index":0,"delta":{"content":"17"}}]}\n\n'
    wire = Wire(*[httpx.Response(200, content=early) for _ in range(4)])
    model = make_model("openai", wire, stream=True)
    with pytest.raises(ModelError, match=r"stream ended before the reply was complete"):
        await model.complete(REQUEST)
    assert len(wire.requests) == 4


async def test_truncated_json_is_retried_then_reported() -> None:
    truncated = httpx.Response(200, content=b'{"id": "chatcmpl-1", "choices": [{"ind')
    wire = Wire(truncated, json_reply(OPENAI_FINAL))
    model = make_model("openai", wire)
    assert (await model.complete(REQUEST)).text == "42"

    wire = Wire(*[httpx.Response(200, content=b'{"message": {"content": "4') for _ in range(2)])
    model = make_model("ollama", wire, retry=RetryPolicy(max_retries=1))
    with pytest.raises(ModelError, match="not valid JSON"):
        await model.complete(REQUEST)


@pytest.mark.parametrize(
    ("provider", "key", "env"),
    [("openai", OPENAI_KEY, "OPENAI_API_KEY"), ("anthropic", ANTHROPIC_KEY, "ANTHROPIC_API_KEY")],
)
async def test_401_is_clear_and_never_shows_the_key(provider: str, key: str, env: str) -> None:
    body = {"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid"}}
    wire = Wire(json_reply(body, 401))
    model = make_model(provider, wire)
    with pytest.raises(ModelError) as caught:
        await model.complete(REQUEST)
    message = str(caught.value)
    assert "HTTP 401" in message and env in message
    assert key not in message and key[:12] not in message
    assert len(wire.requests) == 1  # not retried
    assert key not in repr(model) and key not in repr(model.client)


async def test_other_errors_quote_the_server_without_keys() -> None:
    body = {"error": {"message": f"bad request near {OPENAI_KEY} (model gpt-9 unknown)"}}
    wire = Wire(json_reply(body, 400))
    model = make_model("openai", wire)
    with pytest.raises(ModelError) as caught:
        await model.complete(REQUEST)
    assert "model gpt-9 unknown" in str(caught.value)
    assert OPENAI_KEY not in str(caught.value)


async def test_anthropic_overloaded_mid_stream_is_retried_and_bad_request_is_not() -> None:
    overloaded = (
        b'event: message_start\ndata: {"type":"message_start","message":{"usage":{}}}\n\n'
        b"event: error\n"
        b'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    wire = Wire(
        httpx.Response(200, content=overloaded), file_reply("anthropic_stream_text.sse", SSE)
    )
    model = make_model("anthropic", wire, stream=True)
    assert (await model.complete(REQUEST)).text == "The answer is 42."
    assert len(sleeps_of(model)) == 1

    invalid = b'event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"no"}}\n\n'
    wire = Wire(httpx.Response(200, content=invalid))
    model = make_model("anthropic", wire, stream=True)
    with pytest.raises(ModelError, match="invalid_request_error"):
        await model.complete(REQUEST)
    assert len(wire.requests) == 1


async def test_a_stream_dropped_every_time_says_so() -> None:
    cut = b'data: {"choices":[{"index":0,"delta":{"content":"17'
    wire = Wire(*[httpx.Response(200, stream=CutStream(cut)) for _ in range(2)])
    model = make_model("openai", wire, stream=True, retry=RetryPolicy(max_retries=1))
    with pytest.raises(ModelError) as caught:
        await model.complete(REQUEST)
    assert not isinstance(caught.value, ModelUnavailableError)
    assert "dropped the connection during the reply" in str(caught.value)
    assert "2 attempts" in str(caught.value)
