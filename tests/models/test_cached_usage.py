"""Prompt-cache figures in `Usage`: read from each provider's reply, summed over calls,
and written out only when set (a reply without them keeps its old wire form)."""

from __future__ import annotations

import asyncio
from typing import Any

from model_helpers import Wire, json_reply, make_model

from loopwright.messages import Message, ModelRequest, Usage


def openai_usage(usage: dict[str, Any] | None) -> Usage:
    """The Usage an OpenAI adapter reads from a reply carrying `usage`."""
    reply = {
        "model": "gpt-4.1-mini",
        "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": usage,
    }
    return _usage_read("openai", reply)


def anthropic_usage(usage: dict[str, Any]) -> Usage:
    """The Usage an Anthropic adapter reads from a reply carrying `usage`."""
    reply = {
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "usage": usage,
    }
    return _usage_read("anthropic", reply)


def _usage_read(provider: str, reply: dict[str, Any]) -> Usage:
    model = make_model(provider, Wire(json_reply(reply)))
    request = ModelRequest(messages=(Message.user("hi"),))
    return asyncio.run(model.complete(request)).usage


def test_cached_tokens_are_written_only_when_set() -> None:
    assert Usage(10, 2).to_dict() == {"input_tokens": 10, "output_tokens": 2}
    cached = Usage(640, 10, 520)
    assert cached.to_dict() == {
        "input_tokens": 640,
        "output_tokens": 10,
        "cached_input_tokens": 520,
    }
    assert Usage.from_dict(cached.to_dict()) == cached
    assert Usage.from_dict({"input_tokens": 5, "output_tokens": 1}) == Usage(5, 1, 0)
    assert cached.evaluated_input_tokens == 120


def test_cached_tokens_add_up_over_calls() -> None:
    total = Usage(500, 20) + Usage(640, 10, 520) + Usage(700, 5, 600)
    assert total == Usage(1840, 35, 1120)
    assert total.evaluated_input_tokens == 720


def test_openai_reports_its_cached_prompt_tokens() -> None:
    raw = {
        "prompt_tokens": 96,
        "completion_tokens": 41,
        "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
    }
    assert openai_usage(raw) == Usage(96, 41, 64)
    assert openai_usage({"prompt_tokens": 9, "completion_tokens": 1}) == Usage(9, 1, 0)
    no_details = {"prompt_tokens": 9, "completion_tokens": 1, "prompt_tokens_details": None}
    assert openai_usage(no_details) == Usage(9, 1, 0)


def test_anthropic_cache_reads_are_cached_input() -> None:
    raw = {
        "input_tokens": 100,
        "cache_creation_input_tokens": 40,
        "cache_read_input_tokens": 500,
        "output_tokens": 12,
    }
    assert anthropic_usage(raw) == Usage(640, 12, 500)  # input counts every prompt token
