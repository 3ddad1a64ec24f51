"""Whole agent runs through AgentExecutor over each HTTP adapter, the provider replaced by
an httpx.MockTransport serving recorded replies: native tool call -> tool -> final answer."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from model_helpers import (
    ANTHROPIC_KEY,
    EXCHANGES,
    OPENAI_KEY,
    Wire,
    file_reply,
    json_reply,
    make_model,
)

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.events import ModelResponseEvent, RunFinishedEvent, encode_event
from loopwright.tools import tool


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def _recorded(provider: str, name: str) -> Any:
    cases = json.loads((EXCHANGES / f"{provider}.json").read_text(encoding="utf-8"))["cases"]
    case = next(c for c in cases if c["name"] == name)
    reply = case["reply"]
    if "file" in reply:
        return file_reply(reply["file"], reply["content_type"])
    return json_reply(reply["json"])


RUNS = {
    # provider: (first reply, second reply) for whole and streamed replies
    ("openai", False): ("native_tool_call", "tool_result_then_final"),
    ("openai", True): ("stream_parallel_tool_calls", "stream_text"),
    ("anthropic", False): ("native_tool_use", "tool_result_then_final"),
    ("anthropic", True): ("stream_tool_use", "stream_text"),
    ("ollama", False): ("native_tool_call", "tool_result_then_final"),
    ("ollama", True): ("stream_tool_call", "stream_text"),
}


def _tool_results(provider: str, body: dict[str, Any]) -> list[str]:
    """The tool results our second request carried, read back from the provider's format."""
    if provider == "anthropic":
        return [
            block["content"]
            for turn in body["messages"]
            for block in turn["content"]
            if block["type"] == "tool_result"
        ]
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize(("provider", "stream"), list(RUNS))
async def test_native_tool_call_then_final_answer(provider: str, stream: bool) -> None:
    first, second = RUNS[(provider, stream)]
    wire = Wire(_recorded(provider, first), _recorded(provider, second))
    model = make_model(provider, wire, stream=stream, tool_mode="native")
    agent = AgentExecutor(model, [add, multiply], options=AgentOptions(tool_mode="native"))

    events = [event async for event in agent.stream("What is 17 + 25?")]

    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.status == "completed"
    assert "42" in (finished.answer or "")
    responses = [e for e in events if isinstance(e, ModelResponseEvent)]
    assert responses[0].actions[0]["tool"] == "add"
    assert responses[0].actions[0]["arguments"] == {"a": 17, "b": 25}
    first_body, second_body = wire.bodies
    assert {t.get("name") or t["function"]["name"] for t in first_body["tools"]} == {
        "add",
        "multiply",
    }
    results = _tool_results(provider, second_body)
    assert results and results[0].startswith("42")
    if provider == "openai" and stream:  # two calls in parallel: both results go back
        assert len(results) == 2 and results[1].startswith("42")
    usage = finished.usage
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0


async def test_hosted_usage_is_priced_by_the_ledger() -> None:
    wire = Wire(
        _recorded("openai", "native_tool_call"), _recorded("openai", "tool_result_then_final")
    )
    model = make_model("openai", wire)  # gpt-4.1-mini on api.openai.com: native by default
    result = await AgentExecutor(model, [add]).run("What is 17 + 25?")
    assert result.status == "completed"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (82 + 120, 18 + 9)
    expected = ((82 + 120) * 0.4 + (18 + 9) * 1.6) / 1_000_000
    assert result.cost == pytest.approx(expected)


async def test_prompted_run_against_an_openai_compatible_server() -> None:
    """llama.cpp's server style: no native tools; the call and the answer sit in the content."""

    def reply(content: str) -> Any:
        message = {"role": "assistant", "content": content}
        usage = {"prompt_tokens": 300, "completion_tokens": 20}
        return json_reply(
            {"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage}
        )

    action = {"thought": "add them", "action": "add", "action_input": {"a": 17, "b": 25}}
    wire = Wire(reply(json.dumps(action)), reply('{"thought": "done", "final_answer": "42"}'))
    model = make_model("openai", wire, base_url="http://127.0.0.1:8080/v1", model="qwen")
    assert model.preferred_tool_mode == "prompted"
    result = await AgentExecutor(model, [add]).run("What is 17 + 25?")
    assert result.status == "completed" and result.answer == "42"
    assert [(s.tool_name, s.arguments) for s in result.steps] == [("add", {"a": 17, "b": 25})]
    first, second = wire.bodies
    assert "tools" not in first and "tools" not in second
    assert second["messages"][-2] == {"role": "assistant", "content": json.dumps(action)}
    assert second["messages"][-1]["role"] == "user"
    assert "Observation from add (add two integers): 42" in second["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("provider", "key"), [("openai", OPENAI_KEY), ("anthropic", ANTHROPIC_KEY)]
)
async def test_keys_stay_out_of_events_and_logs(
    provider: str, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = RUNS[(provider, False)]
    wire = Wire(_recorded(provider, first), _recorded(provider, second))
    model = make_model(provider, wire)
    caplog.set_level(logging.DEBUG)
    events = [event async for event in AgentExecutor(model, [add, multiply]).stream("17 + 25?")]
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "completed"
    wire_log = "\n".join(encode_event(event) for event in events)
    assert key not in wire_log and key not in caplog.text
    assert any(
        provider in record.getMessage() or "HTTP" in record.getMessage()
        for record in caplog.records
    )
