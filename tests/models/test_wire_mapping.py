"""What each adapter puts on the wire (headers, keys, tool turns, JSON mode), how specs
resolve, and how a tool call the model garbled reaches the parser chain."""

from __future__ import annotations

import json

import httpx
import pytest
from model_helpers import ANTHROPIC_KEY, OPENAI_KEY, TOOL_SPECS, Wire, json_reply, make_model

from loopwright.errors import ConfigurationError
from loopwright.messages import Message, ModelRequest, ToolCall
from loopwright.models import AnthropicModel, OllamaModel, OpenAIModel, resolve_model
from loopwright.parsing import ParsedAction, parse_reply

OPENAI_OK = {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}
ANTHROPIC_OK = {"type": "message", "content": [{"type": "text", "text": "ok"}]}
OLLAMA_OK = {"message": {"role": "assistant", "content": "ok"}, "done": True}
CALL = ToolCall("call_1", "add", {"a": 1, "b": 2})
NATIVE_HISTORY = (
    Message.system("sys"),
    Message.user("1+2?"),
    Message.assistant("", (CALL,)),
    Message.tool("3", "call_1", "add"),
)


async def test_keys_go_in_the_documented_headers() -> None:
    wire = Wire(json_reply(OPENAI_OK), json_reply(ANTHROPIC_OK))
    await make_model("openai", wire).complete(ModelRequest(messages=NATIVE_HISTORY[:2]))
    await make_model("anthropic", wire).complete(ModelRequest(messages=NATIVE_HISTORY[:2]))
    openai, anthropic = wire.requests
    assert openai.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert anthropic.headers["x-api-key"] == ANTHROPIC_KEY
    assert anthropic.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in anthropic.headers


async def test_openai_compatible_server_on_loopback_needs_no_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    wire = Wire(json_reply(OPENAI_OK))
    model = OpenAIModel("qwen", base_url="http://127.0.0.1:8080/v1", transport=wire.transport)
    assert (await model.complete(ModelRequest(messages=NATIVE_HISTORY[:2]))).text == "ok"
    assert "authorization" not in wire.requests[0].headers
    assert str(wire.requests[0].url) == "http://127.0.0.1:8080/v1/chat/completions"
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-4.1-mini")
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIModel("qwen", base_url="http://gpu-box.example:8000/v1")


def test_anthropic_needs_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        resolve_model("anthropic:claude-sonnet-4-5")


def test_specs_resolve_with_env_and_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5:11434")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    ollama = resolve_model("ollama:qwen3:8b")
    assert isinstance(ollama, OllamaModel)
    assert (ollama.name, ollama.base_url) == ("ollama:qwen3:8b", "http://10.0.0.5:11434")
    assert ollama.preferred_tool_mode == "prompted"
    flagged = resolve_model("ollama:qwen3:8b", base_url="http://127.0.0.1:9999")
    assert isinstance(flagged, OllamaModel) and flagged.base_url == "http://127.0.0.1:9999"
    hosted = resolve_model("openai:gpt-4.1-mini")
    assert isinstance(hosted, OpenAIModel)
    assert hosted.base_url == "https://api.openai.com/v1" and hosted.preferred_tool_mode == "native"
    local = resolve_model("openai:qwen", base_url="http://127.0.0.1:8080/v1")
    assert local.preferred_tool_mode == "prompted"
    claude = resolve_model("anthropic:claude-sonnet-4-5")
    assert isinstance(claude, AnthropicModel) and claude.preferred_tool_mode == "native"
    for model in (ollama, hosted, local, claude):
        assert OPENAI_KEY not in repr(model) and ANTHROPIC_KEY not in repr(model)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama"])
async def test_without_native_tools_tool_turns_become_observation_text(provider: str) -> None:
    reply = {"openai": OPENAI_OK, "anthropic": ANTHROPIC_OK, "ollama": OLLAMA_OK}[provider]
    wire = Wire(json_reply(reply))
    await make_model(provider, wire).complete(ModelRequest(messages=NATIVE_HISTORY))
    (sent,) = wire.bodies
    text = str(sent["messages"])
    assert "Observation from add: 3" in text
    assert "tool_calls" not in text and "tool_use" not in text and "'role': 'tool'" not in text


async def test_anthropic_merges_turns_and_skips_empty_replies() -> None:
    history = (
        Message.system("sys"),
        Message.user("1+2?"),
        Message.assistant(""),  # a reply that could not be read: nothing to send back
        Message.user("Please answer in the expected format."),
    )
    wire = Wire(json_reply(ANTHROPIC_OK))
    await make_model("anthropic", wire).complete(ModelRequest(messages=history))
    (sent,) = wire.bodies
    assert sent["system"] == "sys"
    assert sent["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "1+2?"},
                {"type": "text", "text": "Please answer in the expected format."},
            ],
        }
    ]


async def test_json_mode_and_token_limits_per_server() -> None:
    request = ModelRequest(messages=NATIVE_HISTORY[:2], json_output=True, max_output_tokens=99)
    wire = Wire(json_reply(OPENAI_OK), json_reply(OPENAI_OK), json_reply(OLLAMA_OK))
    await make_model("openai", wire).complete(request)
    await make_model("openai", wire, base_url="http://127.0.0.1:8080/v1").complete(request)
    await make_model("ollama", wire).complete(request)
    hosted, llama_cpp, ollama = wire.bodies
    assert hosted["response_format"] == {"type": "json_object"}
    assert hosted["max_completion_tokens"] == 99 and "max_tokens" not in hosted
    assert llama_cpp["response_format"] == {"type": "json_object"}  # json_schema 500s there
    assert llama_cpp["max_tokens"] == 99 and "max_completion_tokens" not in llama_cpp
    assert ollama["format"] == "json" and ollama["options"]["num_predict"] == 99


async def test_ollama_gives_every_call_its_own_id() -> None:
    call = {"function": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    reply = {"message": {"role": "assistant", "content": "", "tool_calls": [call]}, "done": True}
    wire = Wire(json_reply(reply), json_reply(reply))
    model = make_model("ollama", wire, tool_mode="native")
    request = ModelRequest(messages=NATIVE_HISTORY[:2], tools=(TOOL_SPECS["add"],))
    first = (await model.complete(request)).tool_calls[0]
    second = (await model.complete(request)).tool_calls[0]
    assert first.name == second.name == "add" and first.id != second.id


async def test_a_cut_off_native_call_is_repaired_and_stays_native() -> None:
    broken = {
        "id": "call_X",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a": 1, "b": 2'},
    }
    reply = {
        "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [broken]}}]
    }
    wire = Wire(json_reply(reply))
    request = ModelRequest(messages=NATIVE_HISTORY[:2], tools=(TOOL_SPECS["add"],))
    response = await make_model("openai", wire).complete(request)
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_X", "add", {"a": 1, "b": 2})
    ]


async def test_a_garbled_native_call_reaches_the_parser_chain_as_text() -> None:
    broken = {
        "id": "call_X",
        "type": "function",
        "function": {"name": "add", "arguments": '"a": 1, "b": 2}'},
    }
    reply = {
        "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [broken]}}]
    }
    wire = Wire(json_reply(reply))
    request = ModelRequest(messages=NATIVE_HISTORY[:2], tools=(TOOL_SPECS["add"],))
    response = await make_model("openai", wire).complete(request)
    assert response.tool_calls == ()
    assert '"name": "add"' in response.text
    outcome = parse_reply(response)
    assert isinstance(outcome, ParsedAction)
    assert [c.name for c in outcome.calls] == ["add"]


async def test_a_cut_off_streamed_tool_use_is_repaired_and_stays_native() -> None:
    events = [
        ("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {}},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"a": 1, "b": 2'},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    wire = Wire(httpx.Response(200, content=body.encode()))
    request = ModelRequest(messages=NATIVE_HISTORY[:2], tools=(TOOL_SPECS["add"],))
    response = await make_model("anthropic", wire, stream=True).complete(request)
    assert response.finish_reason == "tool_use"
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("toolu_9", "add", {"a": 1, "b": 2})
    ]


async def test_crlf_framed_sse_with_ping_comments_as_llama_cpp_python_sends_it() -> None:
    """llama-cpp-python's server streams through sse-starlette: CRLF lines, `: ping` comments."""
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": '{"final'}}]},
        {"choices": [{"index": 0, "delta": {"content": '_answer": "42"}'}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    frames = [f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in chunks]
    frames.insert(1, ": ping - 2026-11-22 14:00:00.000000\r\n\r\n")
    body = "".join([*frames, "data: [DONE]\r\n\r\n"]).encode()
    wire = Wire(httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}))
    model = make_model("openai", wire, stream=True, base_url="http://127.0.0.1:8080/v1")
    response = await model.complete(ModelRequest(messages=NATIVE_HISTORY[:2]))
    assert response.text == '{"final_answer": "42"}'
    assert response.finish_reason == "stop"
