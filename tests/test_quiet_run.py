"""A run nobody listens to (no `on_event`, no recording) builds no events and no request
fingerprint, and must end exactly as the same run with a listener."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.agent._conversation import Transcript
from loopwright.events import Event, ModelResponseEvent
from loopwright.messages import Message, ModelResponse, ToolCall
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def big(size: int) -> str:
    """A long output."""
    return "x" * size


@tool
async def fail(text: str) -> str:
    """Always fails."""
    raise RuntimeError(f"cannot {text}")


def call(name: str, **args: Any) -> str:
    return json.dumps({"thought": f"use {name}", "action": name, "action_input": args})


def native(index: int) -> ModelResponse:
    return ModelResponse(tool_calls=(ToolCall(f"c{index}", "add", {"a": index, "b": 1}),))


Scenario = Callable[[], tuple[ScriptedModel, AgentOptions]]
SCENARIOS: dict[str, Scenario] = {
    "native, completed": lambda: (
        ScriptedModel([native(i) for i in range(5)] + ["done"], tool_mode="native"),
        AgentOptions(),
    ),
    "prompted, tool error, completed": lambda: (
        ScriptedModel([call("add", a=1, b=2), call("fail", text="x"), '{"final_answer": "3"}']),
        AgentOptions(),
    ),
    "max iterations, partial work": lambda: (
        ScriptedModel([call("add", a=i, b=1) for i in range(3)], strict=False),
        AgentOptions(max_iterations=3),
    ),
    "repetition nudge, then stop": lambda: (
        ScriptedModel([call("add", a=1, b=1)] * 4, strict=False),
        AgentOptions(repetition_threshold=3),
    ),
    "unreadable reply, parse error": lambda: (
        ScriptedModel(["", "  "], strict=False),
        AgentOptions(),
    ),
    "context window cuts": lambda: (
        ScriptedModel([call("big", size=3000 + i) for i in range(6)] + ['{"final_answer": "ok"}']),
        AgentOptions(context_window=2000),
    ),
}


async def _run(scenario: Scenario, listen: bool) -> tuple[Any, list[Any]]:
    model, options = scenario()
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    agent = AgentExecutor(model, [add, big, fail], options=options)
    result = await agent.run("go", run_id="run_same", on_event=sink if listen else None)
    assert bool(events) == listen
    return result, [request.messages for request in model.requests]


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_quiet_run_ends_like_a_listened_one(name: str) -> None:
    quiet, quiet_requests = await _run(SCENARIOS[name], listen=False)
    loud, loud_requests = await _run(SCENARIOS[name], listen=True)
    assert quiet == loud
    assert quiet_requests == loud_requests


async def test_listened_run_still_fingerprints_each_request() -> None:
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    model = ScriptedModel([native(0), "done"], tool_mode="native")
    await AgentExecutor(model, [add]).run("go", on_event=sink)
    digests = [e.request_digest for e in events if isinstance(e, ModelResponseEvent)]
    assert len(digests) == 2 and all(len(d) == 16 for d in digests) and len(set(digests)) == 2


def test_conversation_without_fingerprint_refuses_a_digest() -> None:
    conversation = Transcript("system", fingerprinted=False)
    conversation.append(Message.user("hi"))
    assert conversation.total_tokens > 0
    with pytest.raises(ValueError):
        conversation.digest(None, ())
