"""`ollama:NAME`: Ollama's `/api/chat`, whole (`stream: false`) or streamed as NDJSON.

A call that offers native tools is sent whole (`stream: false`, seed 003's decision: Ollama
streamed tool calls wrongly before 0.8.0) unless `stream_tools=True`.

Tool mode per model: unless `tool_mode` is given, the first time the agent asks for it the
adapter asks the server once (`POST /api/show`, a 2 s synchronous call, cached per server
and model) and picks native tools when the model supports them (`"tools"` in its
`capabilities`, or, from servers without that field, a template that uses `.Tools`), the
prompted format otherwise. `tool_mode_reason` says why; the agent records both in the run.

Tools go in `tools`; the model's calls come back in `message.tool_calls` with arguments as
JSON objects and no ids (ids are made here, so every call in a run has its own); tool results
go back as `{"role": "tool", "content", "tool_name"}`. Usage is `prompt_eval_count` in,
`eval_count` out. The server is `--base-url`, else `OLLAMA_HOST`, else localhost:11434.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from loopwright.errors import ModelError
from loopwright.messages import Message, ModelRequest, ModelResponse, ToolSpec, Usage
from loopwright.models._base import ToolMode
from loopwright.models._http import HttpClient, Transient, ndjson
from loopwright.models._stop import StreamedText, stop_sequences
from loopwright.models._wire import (
    HttpModel,
    TextSink,
    chat_body,
    to_response,
    with_call_ids,
    with_usage,
)

DEFAULT_OLLAMA_URL = "http://localhost:11434"


def ollama_base_url(base_url: str | None = None) -> str:
    """`--base-url`, else `OLLAMA_HOST` (a bare `host:port` is fine), else the default."""
    url = base_url or os.environ.get("OLLAMA_HOST") or DEFAULT_OLLAMA_URL
    return url if "://" in url else f"http://{url}"


SHOW_TIMEOUT_S = 2.0
_CHOSEN: dict[tuple[str, str], tuple[ToolMode, str]] = {}
"""(server, model) -> (tool mode, why): /api/show is asked once per process."""


def tool_mode_from_show(data: Any) -> tuple[ToolMode, str]:
    """(tool mode, why) from an `/api/show` reply."""
    if not isinstance(data, dict):
        return "prompted", "the server's /api/show reply was not an object"
    capabilities = data.get("capabilities")
    if isinstance(capabilities, list):
        if "tools" in capabilities:
            return "native", "the model's capabilities include tools"
        return (
            "prompted",
            f"the model's capabilities ({', '.join(map(str, capabilities))}) lack tools",
        )
    template = data.get("template")
    if isinstance(template, str) and ".Tools" in template:
        return "native", "the model's template renders tools (.Tools)"
    return "prompted", "the model's template does not render tools"


def detect_tool_mode(
    base_url: str, model: str, transport: httpx.BaseTransport | None = None
) -> tuple[ToolMode, str]:
    """Ask the server whether `model` takes native tools (cached per server and model)."""
    key = (base_url, model)
    if key not in _CHOSEN:
        try:
            with httpx.Client(transport=transport, timeout=SHOW_TIMEOUT_S) as client:
                reply = client.post(f"{base_url.rstrip('/')}/api/show", json={"model": model})
            if reply.status_code != 200:
                return "prompted", f"/api/show answered HTTP {reply.status_code}"  # not cached
            _CHOSEN[key] = tool_mode_from_show(reply.json())
        except (httpx.HTTPError, ValueError) as exc:
            return "prompted", f"/api/show could not be read ({type(exc).__name__})"
    return _CHOSEN[key]


def tool_json(spec: ToolSpec) -> dict[str, Any]:
    """A tool in the `{"type": "function", "function": {...}}` shape Ollama and OpenAI share."""
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


def _wire(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = {"role": message.role, "content": message.content or ""}
    if message.tool_calls:
        data["tool_calls"] = [
            {"function": {"name": call.name, "arguments": call.arguments}}
            for call in message.tool_calls
        ]
    if message.role == "tool" and message.name:
        data["tool_name"] = message.name
    return data


def _usage(data: dict[str, Any]) -> Usage:
    return Usage(int(data.get("prompt_eval_count") or 0), int(data.get("eval_count") or 0))


class OllamaModel(HttpModel):
    """A model served by Ollama."""

    provider = "ollama"
    path = "/api/chat"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        tool_mode: ToolMode | None = None,
        stream: bool | None = None,
        stream_tools: bool = False,
        on_text: TextSink | None = None,
        max_output_tokens: int | None = None,
        context: int | None = None,
        **http: Any,
    ) -> None:
        client = HttpClient(
            "ollama",
            ollama_base_url(base_url),
            hint="is Ollama running? try `ollama serve` (or set OLLAMA_HOST or --base-url)",
            status_hints={404: f"is the model pulled? try `ollama pull {model}`"},
            **http,
        )
        super().__init__(
            model,
            client,
            tool_mode=tool_mode or "prompted",
            stream=stream,
            on_text=on_text,
            max_output_tokens=max_output_tokens,
        )
        self.context = context
        self.stream_tools = stream_tools
        """Stream a call that offers native tools too. Off by default (seed 003: "`stream:
        false` for tool calling"): Ollama streams tool calls correctly from 0.8.0 on
        (docs/models.md); a call without tools streams as `stream` says."""
        self.tool_mode_reason: str | None = None if tool_mode is None else "given"
        transport = http.get("transport")
        self._show_transport = transport if isinstance(transport, httpx.BaseTransport) else None

    @property
    def preferred_tool_mode(self) -> ToolMode:
        """Native tools when the model supports them, else prompted (asked once)."""
        if self.tool_mode_reason is None:
            self.tool_mode, self.tool_mode_reason = detect_tool_mode(
                self.base_url, self.model, self._show_transport
            )
        return self.tool_mode

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if not self._streams(request):  # (not even to stop at the action)
            return await self._complete_whole(request)
        return await super().complete(request)

    async def complete_streaming(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """Streamed, unless the call offers tools and `stream_tools` is off: then one JSON
        body (`stream: false`), as seed 003 decided."""
        if not self._streams(request):
            return await self._complete_whole(request)
        return await super().complete_streaming(request, on_text)

    def _streams(self, request: ModelRequest) -> bool:
        return self.stream_tools or not request.tools

    async def _complete_whole(self, request: ModelRequest) -> ModelResponse:
        body = self.request_body(request, stream=False)
        reply = await self.client.post(self.path, body, self._read_whole)
        return with_usage(request, reply)

    def request_body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        body = chat_body(self.model, request, stream=stream, wire=_wire, tool_json=tool_json)
        options: dict[str, Any] = {}
        if request.temperature is not None:
            options["temperature"] = request.temperature
        if limit := request.max_output_tokens or self.max_output_tokens:
            options["num_predict"] = limit
        if self.context:
            options["num_ctx"] = self.context
        if request.stop_at_action and not stream and not request.tools:
            options["stop"] = stop_sequences(request)  # (native calls: Ollama ends after them)
        if options:
            body["options"] = options
        if request.output_schema is not None:
            body["format"] = request.output_schema  # Ollama 0.5+: output constrained to it
        elif request.json_output:
            body["format"] = "json"
        return body

    def read_reply(self, data: Any) -> ModelResponse:
        if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
            raise self._unexpected(data)
        message = with_call_ids(data["message"])
        return to_response(message, _usage(data), self.name, data.get("done_reason"))

    async def read_stream(self, reply: httpx.Response, request: ModelRequest) -> ModelResponse:
        text = StreamedText(request, self.emit_text)
        calls: list[Any] = []
        async for chunk in ndjson(reply):
            if not isinstance(chunk, dict) or "error" in chunk:
                raise self._unexpected(chunk)
            message = chunk.get("message") or {}
            if message.get("tool_calls"):
                calls.extend(message["tool_calls"])
                text.native_call()
            cut = text.add(message.get("content") or "")
            if cut or chunk.get("done"):  # cut: closing the stream ends generation
                whole: dict[str, Any] = {"role": "assistant", "content": text.text}
                if calls:
                    whole = with_call_ids({**whole, "tool_calls": calls})
                usage = text.usage(Usage() if cut else _usage(chunk))
                reason = text.finish_reason(chunk.get("done_reason"))
                return to_response(whole, usage, self.name, reason)
        raise Transient("the stream ended before the reply was complete (no `done: true`)")

    def _unexpected(self, data: Any) -> ModelError:
        detail = data.get("error") if isinstance(data, dict) and "error" in data else data
        shown = self.client.redact(str(detail))[:300]
        url = self.client.url(self.path)
        return ModelError(f"ollama at {url} answered: {shown}", provider="ollama", url=url)


STREAM_TOOLS_ENV = "LOOPWRIGHT_OLLAMA_STREAM_TOOLS"


def ollama_model(name: str, base_url: str | None = None) -> OllamaModel:
    """The factory behind `--model ollama:NAME`; `LOOPWRIGHT_OLLAMA_STREAM_TOOLS=1` turns
    `stream_tools` on (for Ollama 0.8.0 and later)."""
    stream_tools = os.environ.get(STREAM_TOOLS_ENV, "").strip().lower() in ("1", "true", "yes")
    return OllamaModel(name, base_url=base_url, stream_tools=stream_tools)
