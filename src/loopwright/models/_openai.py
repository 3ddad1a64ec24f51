"""`openai:NAME`: chat completions on OpenAI or any OpenAI-compatible server.

`--base-url` (else `OPENAI_BASE_URL`, else https://api.openai.com/v1) points it at vLLM,
llama.cpp's server, LM Studio... `OPENAI_API_KEY` is sent as a bearer token; it is not
needed for a server on this machine (loopback).

Tools go in `tools` (no `tool_choice`: llama.cpp's server answers `"auto"` with the call in
the content, which the parser chain reads); calls come back in `tool_calls` with arguments
as a JSON string, streamed as deltas assembled by `index`; results go back as
`{"role": "tool", "tool_call_id", "content"}`. Usage is `usage.prompt_tokens` /
`completion_tokens` (streamed with `stream_options: {"include_usage": true}`).

llama.cpp server quirks handled here: an assistant message is always sent with a string
`content` (`null` gets HTTP 500), and JSON output is asked for with `{"type":
"json_object"}`, never `json_schema` (also HTTP 500).
"""

from __future__ import annotations

import json
import os
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from loopwright._net import is_loopback_url
from loopwright.errors import ConfigurationError, ModelError
from loopwright.messages import Message, ModelRequest, ModelResponse, Usage
from loopwright.models._base import ToolMode
from loopwright.models._http import HttpClient, Secret, Transient, loads, sse
from loopwright.models._ollama import tool_json
from loopwright.models._stop import StreamedText, stop_sequences
from loopwright.models._wire import (
    HttpModel,
    TextSink,
    chat_body,
    to_response,
    with_call_ids,
)

DEFAULT_OPENAI_URL = "https://api.openai.com/v1"


def openai_base_url(base_url: str | None = None) -> str:
    return base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_URL


def _wire(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    data: dict[str, Any] = {"role": message.role, "content": message.content or ""}
    if message.tool_calls:
        data["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in message.tool_calls
        ]
    return data


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        int(raw.get("prompt_tokens") or 0),
        int(raw.get("completion_tokens") or 0),
        int(cached or 0),
    )


class _ToolCallDeltas:
    """Tool calls streamed in pieces: `{"index", "id"?, "function": {"name"?, "arguments"?}}`."""

    def __init__(self) -> None:
        self.slots: dict[int, dict[str, Any]] = {}

    def add(self, delta: dict[str, Any]) -> None:
        index = delta.get("index")
        slot = self.slots.setdefault(
            index if isinstance(index, int) else len(self.slots),
            {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if delta.get("id"):
            slot["id"] = delta["id"]
        function = delta.get("function") or {}
        if function.get("name") and not slot["function"]["name"]:
            slot["function"]["name"] = function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        if arguments:
            slot["function"]["arguments"] += arguments

    def calls(self) -> list[dict[str, Any]]:
        return [self.slots[index] for index in sorted(self.slots)]


class OpenAIModel(HttpModel):
    """A model behind an OpenAI-compatible chat completions endpoint."""

    provider = "openai"
    path = "/chat/completions"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        tool_mode: ToolMode | None = None,
        stream: bool | None = None,
        on_text: TextSink | None = None,
        max_output_tokens: int | None = None,
        schema_format: Literal["json_schema", "json_object"] | None = None,
        **http: Any,
    ) -> None:
        url = openai_base_url(base_url)
        self.official = urlsplit(url).hostname == "api.openai.com"
        self.schema_format = schema_format or ("json_schema" if self.official else "json_object")
        """How a structured-output schema is sent: OpenAI's `json_schema` response format, or
        `{"type": "json_object", "schema": ...}` (llama.cpp's servers; the default for
        servers other than api.openai.com)."""
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        if not key and not is_loopback_url(url):
            raise ConfigurationError(
                f"openai:{model} at {url} needs an API key: set OPENAI_API_KEY (a server on "
                "this machine needs none; for another server without keys, set any value)"
            )
        secret = Secret(key)
        client = HttpClient(
            "openai",
            url,
            headers={"Authorization": f"Bearer {key}"} if key else {},
            secrets=(secret,),
            hint=(
                "check your network connection"
                if self.official
                else "is the server running? check --base-url (it usually ends in /v1)"
            ),
            auth_hint="set OPENAI_API_KEY to a valid key",
            status_hints={404: "check the model name, and that --base-url ends in /v1"},
            **http,
        )
        self._context_asked = False
        self._context: int | None = None
        super().__init__(
            model,
            client,
            tool_mode=tool_mode or ("native" if self.official else "prompted"),
            stream=stream,
            on_text=on_text,
            max_output_tokens=max_output_tokens,
        )

    def context_window(self) -> int | None:
        """The server's context size in tokens, when it says: llama.cpp's llama-server
        reports it at `GET /props` (`default_generation_settings.n_ctx`). Asked once, for at
        most 2 s; api.openai.com and servers without /props: None."""
        if self._context_asked:
            return self._context
        self._context_asked = True
        if self.official:
            return None
        root = self.client.base_url.removesuffix("/v1")
        try:
            reply = httpx.get(f"{root}/props", headers=self.client.headers, timeout=2.0)
            settings = reply.json().get("default_generation_settings") or {}
            n_ctx = settings.get("n_ctx") if reply.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            n_ctx = None
        self._context = n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None
        return self._context

    def request_body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        body = chat_body(self.model, request, stream=stream, wire=_wire, tool_json=tool_json)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if limit := request.max_output_tokens or self.max_output_tokens:
            # api.openai.com's newer models refuse max_tokens; other servers ignore the new name
            body["max_completion_tokens" if self.official else "max_tokens"] = limit
        if stream:
            body["stream_options"] = {"include_usage": True}
        elif request.stop_at_action and not request.tools:
            body["stop"] = stop_sequences(request)  # (never between parallel native calls)
        if request.output_schema is not None:
            body["response_format"] = self._schema_format(request.output_schema)
        elif request.json_output:
            body["response_format"] = {"type": "json_object"}
        return body

    def _schema_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.schema_format == "json_object":
            return {"type": "json_object", "schema": schema}
        return {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": schema, "strict": False},
        }

    def read_reply(self, data: Any) -> ModelResponse:
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices[0], dict):
            raise self._unexpected(data)
        choice = choices[0]
        message = with_call_ids(choice.get("message") or {})
        usage = _usage(data.get("usage"))
        return to_response(message, usage, self.name, choice.get("finish_reason"))

    async def read_stream(self, reply: httpx.Response, request: ModelRequest) -> ModelResponse:
        text = StreamedText(request, self.emit_text)
        deltas = _ToolCallDeltas()
        usage = Usage()
        finish: str | None = None
        done = False
        async for _event, data in sse(reply):
            if data.strip() == "[DONE]":
                done = True
                break
            chunk = loads(data, "a streamed event")
            if not isinstance(chunk, dict) or "error" in chunk:
                raise Transient(f"the stream carried an error: {self._detail(chunk)}")
            if chunk.get("usage"):
                usage = _usage(chunk["usage"])
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                for call in delta.get("tool_calls") or ():
                    deltas.add(call)
                    text.native_call()
                if text.add(delta.get("content") or ""):
                    break  # the action is complete: closing the stream ends generation
                finish = choice.get("finish_reason") or finish
            if text.cut:
                break
        if not done and finish is None and not text.cut:
            raise Transient("the stream ended before the reply was complete (no [DONE])")
        message: dict[str, Any] = {"role": "assistant", "content": text.text}
        if deltas.slots:
            message = with_call_ids({**message, "tool_calls": deltas.calls()})
        return to_response(message, text.usage(usage), self.name, text.finish_reason(finish))

    def _detail(self, data: Any) -> str:
        if isinstance(data, dict) and "error" in data:
            error = data["error"]
            data = error.get("message", error) if isinstance(error, dict) else error
        return self.client.redact(str(data))[:300]

    def _unexpected(self, data: Any) -> ModelError:
        url = self.client.url(self.path)
        return ModelError(
            f"openai at {url} answered without a choice: {self._detail(data)}",
            provider="openai",
            url=url,
        )


def openai_model(name: str, base_url: str | None = None) -> OpenAIModel:
    """The factory behind `--model openai:NAME` (and `--base-url` for compatible servers)."""
    return OpenAIModel(name, base_url=base_url)
