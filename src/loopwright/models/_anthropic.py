"""`anthropic:NAME`: the Anthropic Messages API, whole or streamed as server-sent events.

The system prompt goes in the top-level `system`; tools in `tools` (`input_schema`). The
model's calls are `tool_use` content blocks; results go back as `tool_result` blocks in a
user turn (consecutive turns of one role are merged, as the API requires). Streaming reads
`message_start` (input usage), `content_block_start`/`_delta` (`text_delta`,
`input_json_delta`), `message_delta` (stop reason, output usage) and `message_stop`.
`ANTHROPIC_API_KEY` goes in `x-api-key`, with the `anthropic-version` header.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import httpx

from loopwright.errors import ModelError
from loopwright.messages import Message, ModelRequest, ModelResponse, Usage
from loopwright.models._base import ToolMode
from loopwright.models._http import HttpClient, Transient, loads, require_key, sse
from loopwright.models._stop import StreamedText, stop_sequences
from loopwright.models._wire import HttpModel, TextSink, prompted_view, to_response

DEFAULT_ANTHROPIC_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


def anthropic_base_url(base_url: str | None = None) -> str:
    return base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_ANTHROPIC_URL


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:  # the API refuses empty text blocks
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    return blocks


def turns(messages: list[Message]) -> list[dict[str, Any]]:
    """User and assistant turns; tool results become user turns, and neighbours of one role
    are merged (tool results first, as the API wants)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    prompt = sum(
        int(raw.get(key) or 0)
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    cached = int(raw.get("cache_read_input_tokens") or 0)
    return Usage(prompt, int(raw.get("output_tokens") or 0), cached)


class _StreamedMessage:
    """A message assembled from Messages API stream events."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json_parts: dict[int, list[str]] = {}
        self.usage = Usage()
        self.stop_reason: str | None = None
        self.finished = False

    def apply(self, kind: str, event: dict[str, Any]) -> str:
        """Take one event in; returns text to show as it arrives."""
        index = event.get("index", 0)
        if kind == "message_start":
            self.usage = _usage((event.get("message") or {}).get("usage"))
        elif kind == "content_block_start":
            self.blocks[index] = dict(event.get("content_block") or {})
            self.json_parts[index] = []
        elif kind == "content_block_delta":
            delta = event.get("delta") or {}
            block = self.blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
                return str(delta.get("text", ""))
            if delta.get("type") == "input_json_delta":
                self.json_parts.setdefault(index, []).append(delta.get("partial_json", ""))
        elif kind == "content_block_stop":
            block = self.blocks.get(index, {})
            raw = "".join(self.json_parts.get(index, []))
            if block.get("type") == "tool_use" and raw:
                block["input"] = raw  # a JSON string; read (or reported) with the rest
        elif kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason") or self.stop_reason
            output = (event.get("usage") or {}).get("output_tokens")
            if output is not None:
                self.usage = dataclasses.replace(self.usage, output_tokens=int(output))
        elif kind == "message_stop":
            self.finished = True
        return ""

    def message(self) -> dict[str, Any]:
        return {"role": "assistant", "content": [self.blocks[i] for i in sorted(self.blocks)]}


class AnthropicModel(HttpModel):
    """A Claude model through the Messages API."""

    provider = "anthropic"
    path = "/v1/messages"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        tool_mode: ToolMode = "native",
        stream: bool | None = None,
        on_text: TextSink | None = None,
        max_output_tokens: int | None = None,
        **http: Any,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        secret = require_key(key, "ANTHROPIC_API_KEY", f"anthropic:{model}")
        client = HttpClient(
            "anthropic",
            anthropic_base_url(base_url),
            headers={"x-api-key": secret.reveal(), "anthropic-version": ANTHROPIC_VERSION},
            secrets=(secret,),
            hint="check your network connection (or ANTHROPIC_BASE_URL / --base-url)",
            auth_hint="set ANTHROPIC_API_KEY to a valid key",
            status_hints={404: "check the model name"},
            **http,
        )
        super().__init__(
            model,
            client,
            tool_mode=tool_mode,
            stream=stream,
            on_text=on_text,
            max_output_tokens=max_output_tokens,
        )

    def request_body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        messages = list(request.messages) if request.tools else prompted_view(request.messages)
        system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens or self.max_output_tokens or DEFAULT_MAX_TOKENS,
            "messages": turns([m for m in messages if m.role != "system"]),
            "stream": stream,
        }
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.stop_at_action and not stream and not request.tools:
            body["stop_sequences"] = stop_sequences(request)
        return body

    def read_reply(self, data: Any) -> ModelResponse:
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            raise self._error(data)
        message = {"role": "assistant", "content": data["content"]}
        return to_response(message, _usage(data.get("usage")), self.name, data.get("stop_reason"))

    async def read_stream(self, reply: httpx.Response, request: ModelRequest) -> ModelResponse:
        streamed = _StreamedMessage()
        text = StreamedText(request, self.emit_text)
        async for event, data in sse(reply):
            chunk = loads(data, "a streamed event")
            if not isinstance(chunk, dict):
                raise Transient(f"a streamed event is not an object: {data[:80]!r}")
            kind = str(chunk.get("type") or event)
            if kind == "error":
                raise self._error(chunk)
            if (
                kind == "content_block_start"
                and (chunk.get("content_block") or {}).get("type") == "tool_use"
            ):
                text.native_call()
            if text.add(streamed.apply(kind, chunk)) or streamed.finished:
                break  # the action is complete (closing the stream ends generation), or done
        if text.cut:  # the text read up to its action, and the tool calls already whole
            calls = [b for b in streamed.message()["content"] if b.get("type") == "tool_use"]
            content = [{"type": "text", "text": text.text}, *calls]
            message = {"role": "assistant", "content": content}
            return to_response(message, streamed.usage, self.name, text.finish_reason(None))
        if not streamed.finished:
            raise Transient("the stream ended before the reply was complete (no message_stop)")
        return to_response(streamed.message(), streamed.usage, self.name, streamed.stop_reason)

    def _error(self, data: Any) -> Exception:
        error = data.get("error") if isinstance(data, dict) else None
        kind = error.get("type") if isinstance(error, dict) else None
        text = error.get("message") if isinstance(error, dict) else data
        detail = self.client.redact(str(text))[:300]
        if kind in RETRYABLE_ERRORS:
            return Transient(f"{kind}: {detail}")
        url = self.client.url(self.path)
        return ModelError(
            f"anthropic at {url} answered with an error ({kind or 'unexpected reply'}): {detail}",
            provider="anthropic",
            url=url,
        )


def anthropic_model(name: str, base_url: str | None = None) -> AnthropicModel:
    """The factory behind `--model anthropic:NAME`."""
    return AnthropicModel(name, base_url=base_url)
