"""A reply ends once its first action is written: the scripted model, and each HTTP adapter
against a real server on loopback that holds the rest of the reply until the client goes
away (closing the stream is what ends generation on llama.cpp's server and Ollama)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from stream_server import Reply, anthropic_sse, ollama_ndjson, openai_sse, stream_server

from loopwright import AgentExecutor
from loopwright.effects import DeltaSettings, EventLog, LiveEffects
from loopwright.events import Event, ModelResponseEvent, ModelTextDeltaEvent
from loopwright.messages import Message, ModelRequest, ModelResponse, ToolSpec
from loopwright.models import AnthropicModel, OllamaModel, OpenAIModel, RetryPolicy
from loopwright.parsing import DEFAULT_PARSERS, ParsedAction, ParsedFinal, ParseFailure
from loopwright.testing import ScriptedModel

HttpAdapter = OpenAIModel | OllamaModel | AnthropicModel


ADD = '{"thought": "First the sum.", "action": "add", "action_input": {"a": 123, "b": 456}}'
INVENTED = (
    '\n{"thought": "I have the sum.", "final_answer": "123 + 456 = 579"}'
    '\n{"thought": "Now multiply.", "action": "multiply", "action_input": {"a": 579, "b": 7}}'
    '\n{"thought": "Done.", "final_answer": "4053, I think"}'
)
MULTIPLY = '{"action": "multiply", "action_input": {"a": 579, "b": 7}}'
ANSWER = '{"thought": "Done.", "final_answer": "4053"}'
EVERY_PIECE = DeltaSettings(interval_s=0.0, max_chars=1)
SPEC = ToolSpec("add", "Add two integers.", {"type": "object", "properties": {}})


async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


async def listened(agent: AgentExecutor, request: str) -> list[Event]:
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    log = EventLog("run_stop", scrubber=agent.scrubber, sink=sink)
    setup = agent.setup(request, agent.run_context("run_stop"))
    await agent.run_with(LiveEffects(log, deltas=EVERY_PIECE), setup)
    return events


def responses(events: list[Event]) -> list[ModelResponseEvent]:
    return [e for e in events if isinstance(e, ModelResponseEvent)]


async def test_a_scripted_reply_ends_after_its_first_action() -> None:
    model = ScriptedModel([ADD + INVENTED, MULTIPLY, ANSWER])
    events = await listened(AgentExecutor(model, [add, multiply]), "What is (123 + 456) * 7?")
    first = responses(events)[0]
    assert first.response["text"] == ADD
    assert first.response["finish_reason"] == "action_complete"
    assert all(request.stop_at_action for request in model.requests)
    assert [e.response["finish_reason"] for e in responses(events)[1:]] == ["action_complete"] * 2


async def test_the_streamed_text_stops_where_the_action_ends() -> None:
    """What the live view writes out is what the engine uses: no invented answer."""
    model = ScriptedModel([ADD + INVENTED, MULTIPLY, ANSWER], stream_chars=3)
    events = await listened(AgentExecutor(model, [add, multiply]), "What is (123 + 456) * 7?")
    first_reply = []
    for event in events:
        if isinstance(event, ModelResponseEvent):
            break
        if isinstance(event, ModelTextDeltaEvent):
            first_reply.append(event.text)
    assert "".join(first_reply) == ADD
    shown = "".join(e.text for e in events if isinstance(e, ModelTextDeltaEvent))
    assert "4053, I think" not in shown and "123 + 456 = 579" not in shown


class SignedAnswer:
    """A parser of one's own: a reply ending in `-- signed` is its final answer (it reads
    the end of the reply, which stopping at the first action would cut off)."""

    name = "signed"

    def parse(self, response: ModelResponse) -> ParsedAction | ParsedFinal | ParseFailure | None:
        text = response.text.strip()
        return ParsedFinal(text.removesuffix("-- signed")) if text.endswith("-- signed") else None


async def test_a_parser_chain_of_ones_own_gets_whole_replies() -> None:
    model = ScriptedModel([ADD + INVENTED, ANSWER])
    agent = AgentExecutor(model, [add, multiply], parsers=[SignedAnswer(), *DEFAULT_PARSERS])
    events = await listened(agent, "What is 123 + 456?")
    assert not model.requests[0].stop_at_action
    assert responses(events)[0].response["text"] == ADD + INVENTED


def make(provider: str, url: str, **options: Any) -> HttpAdapter:
    retry = RetryPolicy(max_retries=0)
    if provider == "openai":
        return OpenAIModel("m", base_url=f"{url}/v1", retry=retry, **options)
    if provider == "ollama":
        return OllamaModel("m", base_url=url, tool_mode="prompted", retry=retry, **options)
    return AnthropicModel(
        "m", base_url=url, api_key="test-key", tool_mode="prompted", retry=retry, **options
    )


REPLIES = {"openai": openai_sse, "ollama": ollama_ndjson, "anthropic": anthropic_sse}
BEFORE_TEXT = {"openai": 1, "ollama": 0, "anthropic": 2}
"""Pieces each format sends before the first piece of text."""
ACTION_PIECES = -(-len(ADD) // 4)
"""The 4-character pieces up to the one that completes the first action."""


def held_after_the_action(provider: str, text: str) -> Reply:
    """The reply in 4-character pieces; the server sends the pieces up to the one that
    completes the first action, then waits for the client to close the connection."""
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    reply = REPLIES[provider](pieces)
    reply.hold_after = BEFORE_TEXT[provider] + ACTION_PIECES
    reply.until_closed = True
    return reply


@pytest.mark.parametrize("provider", list(REPLIES))
async def test_each_adapter_closes_the_stream_once_the_action_is_read(provider: str) -> None:
    with stream_server() as server:
        first = held_after_the_action(provider, ADD + INVENTED)
        server.replies += [first, REPLIES[provider]([ANSWER])]
        result = await AgentExecutor(make(provider, server.url), [add]).run("What is 123 + 456?")
        closed = first.client_closed.wait(30)
    assert closed  # the client went away with the rest of the reply unsent
    assert result.status == "completed" and result.answer == "4053"
    assert [step.tool_name for step in result.steps] == ["add"]
    assert server.bodies[0]["stream"] is True  # nobody listens: streamed to be able to stop


async def test_the_reply_read_holds_the_text_up_to_the_action_and_counts_its_pieces() -> None:
    with stream_server() as server:
        server.replies.append(held_after_the_action("openai", ADD + INVENTED))
        request = ModelRequest(messages=(Message.user("q"),), stop_at_action=True)
        reply = await make("openai", server.url).complete(request)
    assert reply.text == ADD and reply.finish_reason == "action_complete"
    assert reply.usage.output_tokens == ACTION_PIECES  # one piece per token
    assert reply.usage.input_tokens > 0  # estimated: a stream cut short reports no usage


def openai_calls_then_text(calls: list[dict[str, Any]], text: str) -> Reply:
    chunks: list[dict[str, Any]] = []
    for index, call in enumerate(calls):
        arguments = json.dumps(call["arguments"])
        function = {"name": call["name"], "arguments": arguments[:5]}
        delta = {"index": index, "id": f"c{index}", "type": "function", "function": function}
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [delta]}}]})
        rest = {"index": index, "function": {"arguments": arguments[5:]}}
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [rest]}}]})
    chunks.append({"choices": [{"index": 0, "delta": {"content": text}}]})
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    lines = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks]
    return Reply("text/event-stream", [*lines, b"data: [DONE]\n\n"])


async def test_parallel_native_calls_stay_whole_and_text_after_them_ends_the_reply() -> None:
    calls = [{"name": "add", "arguments": {"a": 1, "b": 2}}, {"name": "add", "arguments": {"a": 3}}]
    with stream_server() as server:
        reply = openai_calls_then_text(calls, "Observation: 3")
        reply.hold_after = 5  # the four pieces of the calls, the text, then the rest waits
        reply.until_closed = True
        server.replies.append(reply)
        request = ModelRequest(messages=(Message.user("q"),), stop_at_action=True)
        response = await make("openai", server.url, tool_mode="native").complete(request)
        closed = reply.client_closed.wait(30)
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("add", {"a": 1, "b": 2}),
        ("add", {"a": 3}),
    ]
    assert response.finish_reason == "action_complete" and response.text == ""
    assert closed


async def test_native_calls_are_whole_when_the_stream_ends_with_them() -> None:
    calls = [{"name": "add", "arguments": {"a": 1, "b": 2}}, {"name": "add", "arguments": {"a": 3}}]
    with stream_server() as server:
        server.replies.append(openai_calls_then_text(calls, ""))
        request = ModelRequest(messages=(Message.user("q"),), stop_at_action=True)
        response = await make("openai", server.url, tool_mode="native").complete(request)
    assert len(response.tool_calls) == 2 and response.finish_reason == "tool_calls"


@pytest.mark.parametrize("provider", ["openai", "ollama", "anthropic"])
def test_a_whole_reply_is_asked_to_stop_with_stop_sequences(provider: str) -> None:
    request = ModelRequest(messages=(Message.user("q"),), stop_at_action=True)
    body = make(provider, "http://127.0.0.1:9", stream=False).request_body(request, stream=False)
    sent = {"openai": body.get("stop"), "ollama": body.get("options", {}).get("stop")}
    sent["anthropic"] = body.get("stop_sequences")
    assert sent[provider] and "}\n{" in sent[provider]
    plain = ModelRequest(messages=(Message.user("q"),))
    native = ModelRequest(messages=(Message.user("q"),), tools=(SPEC,), stop_at_action=True)
    for request in (plain, native):  # none between parallel native calls either
        body = make(provider, "http://127.0.0.1:9", stream=False).request_body(
            request, stream=False
        )
        assert "stop" not in body and "stop_sequences" not in body
        assert "stop" not in body.get("options", {})


async def test_a_whole_reply_cut_by_a_stop_sequence_gets_its_brace_back() -> None:
    """`}\\n{` ended the reply and is not part of its text: the brace it took is put back."""
    with stream_server() as server:
        server.replies += [openai_sse([ADD[:-1]]), openai_sse([ANSWER])]  # `}\n{` left out
        model = make("openai", server.url, stream=False)
        result = await AgentExecutor(model, [add]).run("What is 123 + 456?")
    assert server.bodies[0]["stream"] is False and "}\n{" in server.bodies[0]["stop"]
    assert [(s.tool_name, s.arguments) for s in result.steps] == [("add", {"a": 123, "b": 456})]
