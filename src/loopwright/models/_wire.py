"""What the HTTP adapters share: the call itself, prompted-mode messages, reading replies."""

from __future__ import annotations

import contextvars
import dataclasses
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import httpx

from loopwright.messages import (
    CHARS_PER_TOKEN,
    Message,
    ModelRequest,
    ModelResponse,
    ToolSpec,
    Usage,
)
from loopwright.models._base import TextSink as TextSink
from loopwright.models._base import ToolMode
from loopwright.models._http import Consume, HttpClient, loads
from loopwright.models._stop import closed_after_stop, cut_at_action
from loopwright.parsing.messages import response_from_message

_CALL_SINK: contextvars.ContextVar[TextSink | None] = contextvars.ContextVar(
    "loopwright_text_sink", default=None
)
"""The listener of the streamed call in progress in this task (`complete_streaming`): one
model object is shared by concurrent runs, so the listener is per call, not per model."""


def fresh_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def with_call_ids(message: dict[str, Any]) -> dict[str, Any]:
    """The message with an id on every tool call (some servers send none)."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message
    named = [
        {**call, "id": call.get("id") or fresh_call_id()} if isinstance(call, dict) else call
        for call in calls
    ]
    return {**message, "tool_calls": named}


def observation(message: Message) -> Message:
    """A tool result as user text, the way prompted mode sends observations."""
    return Message.user(f"Observation from {message.name or 'the tool'}: {message.content}")


def chat_body(
    model: str,
    request: ModelRequest,
    *,
    stream: bool,
    wire: Callable[[Message], dict[str, Any]],
    tool_json: Callable[[ToolSpec], dict[str, Any]],
) -> dict[str, Any]:
    """The start of a chat request body shared by Ollama and OpenAI-compatible servers:
    the model, the messages in the provider's shape, streaming, and the tools if native."""
    messages = request.messages if request.tools else prompted_view(request.messages)
    body: dict[str, Any] = {
        "model": model,
        "messages": [wire(m) for m in messages],
        "stream": stream,
    }
    if request.tools:
        body["tools"] = [tool_json(t) for t in request.tools]
    return body


def prompted_view(messages: Sequence[Message]) -> list[Message]:
    """Messages for a request without native tools: providers refuse tool turns then."""
    out: list[Message] = []
    for message in messages:
        if message.role == "tool":
            out.append(observation(message))
        elif message.tool_calls:
            out.append(dataclasses.replace(message, tool_calls=()))
        else:
            out.append(message)
    return out


def _call_text(call: Any) -> str:
    """One tool call as `{"name": ..., "arguments": ...}` text, its arguments left as sent."""
    if not isinstance(call, dict):
        return json.dumps(call, ensure_ascii=False)
    function = call.get("function", call)
    name = json.dumps(function.get("name"), ensure_ascii=False)
    raw = function.get("arguments", function.get("input"))
    arguments = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    return f'{{"name": {name}, "arguments": {arguments or "{}"}}}'


def to_response(
    message: dict[str, Any], usage: Usage, model: str, finish_reason: str | None
) -> ModelResponse:
    """A ModelResponse from an assistant message in OpenAI, Ollama or Anthropic shape.

    A message whose tool calls cannot be read (arguments that are not a JSON object) is
    passed on as text, each call as `{"name": ..., "arguments": ...}` with the arguments as
    the model wrote them: the parser chain repairs them or tells the model what was wrong.
    """
    read = response_from_message(message)
    if isinstance(read, str):
        content = message.get("content")
        texts: list[str] = []
        calls: list[Any] = list(message.get("tool_calls") or ())
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    calls.append(block)
                elif isinstance(block, dict) and isinstance(block.get("text"), str):
                    texts.append(block["text"])
        text = "\n".join([*filter(None, texts), *(_call_text(c) for c in calls)])
        return ModelResponse(text=text, usage=usage, model=model, finish_reason=finish_reason)
    return dataclasses.replace(read, usage=usage, model=model, finish_reason=finish_reason)


def with_usage(request: ModelRequest, reply: ModelResponse) -> ModelResponse:
    """The reply, with its usage counted here when the server reported none (some
    OpenAI-compatible servers, llama-cpp-python's among them, send no usage in a stream):
    a budget that counted nothing would never stop a run. ~4 characters a token, the
    request's messages and tools in, the reply's text and calls out."""
    usage = reply.usage
    if usage.input_tokens and usage.output_tokens:
        return reply
    if not usage.input_tokens:  # (a stream ended at its action: its pieces were counted)
        sent = sum(len(m.content) + len(m.name or "") + 16 for m in request.messages)
        sent += sum(len(json.dumps(t.parameters)) + len(t.description) for t in request.tools)
        usage = dataclasses.replace(usage, input_tokens=max(1, sent // CHARS_PER_TOKEN))
    if not usage.output_tokens:
        said = len(reply.text) + sum(len(json.dumps(c.arguments)) + 16 for c in reply.tool_calls)
        usage = dataclasses.replace(usage, output_tokens=max(1, said // CHARS_PER_TOKEN))
    return dataclasses.replace(reply, usage=usage)


class HttpModel:
    """Base of the HTTP adapters: one POST per call, whole or streamed."""

    provider: ClassVar[str] = ""
    path: ClassVar[str] = ""

    def __init__(
        self,
        model: str,
        client: HttpClient,
        *,
        tool_mode: ToolMode,
        stream: bool | None = None,
        on_text: TextSink | None = None,
        max_output_tokens: int | None = None,
    ) -> None:
        self.model = model
        self.client = client
        self.tool_mode: ToolMode = tool_mode
        self.stream = stream
        """True: every call streams; None (the default): calls stream when someone listens
        to the run (`complete_streaming`); False: never."""
        self.on_text = on_text
        self.max_output_tokens = max_output_tokens

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def preferred_tool_mode(self) -> ToolMode:
        return self.tool_mode

    @property
    def base_url(self) -> str:
        return self.client.base_url

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.name!r}, base_url={self.base_url!r}, "
            f"tool_mode={self.tool_mode!r}, stream={self.stream})"
        )

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """The reply, streamed when the model is told to (`stream=True`) or when the request
        asks to stop at its action (a stream is closed there), else whole."""
        if self.stream or (self.stream is None and request.stop_at_action):
            body = self.request_body(request, stream=True)
            reply = await self.client.post(self.path, body, self._reader(request))
        else:  # asked to stop at the action, a whole reply has stop sequences instead
            body = self.request_body(request, stream=False)
            reply = await self.client.post(self.path, body, self._read_whole)
            if request.stop_at_action:
                reply = closed_after_stop(reply)
        return with_usage(request, reply)

    async def complete_streaming(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """The reply streamed from the server; `on_text` gets each piece of text as it
        arrives. A call retried after a dropped stream sends its text again from the start:
        the complete reply is the one returned. `stream=False` on the model: no streaming."""
        if self.stream is False:
            return await self.complete(request)
        token = _CALL_SINK.set(on_text)
        try:
            body = self.request_body(request, stream=True)
            reply = await self.client.post(self.path, body, self._reader(request))
        finally:
            _CALL_SINK.reset(token)
        return with_usage(request, reply)

    def _reader(self, request: ModelRequest) -> Consume[ModelResponse]:
        async def read(reply: httpx.Response) -> ModelResponse:
            """A stream, or a whole reply from a server that does not stream (its text in
            one piece)."""
            if reply.headers.get("content-type", "").startswith("application/json"):
                response = await self._read_whole(reply)
                if request.stop_at_action:
                    response = cut_at_action(response, calls_in_a_row=request.calls_in_a_row)
                self.emit_text(response.text)
                return response
            return await self.read_stream(reply, request)

        return read

    async def _read_whole(self, reply: httpx.Response) -> ModelResponse:
        data = loads(await reply.aread(), f"the reply of {self.provider}")
        return self.read_reply(data)

    def emit_text(self, piece: str) -> None:
        if not piece:
            return
        listener = _CALL_SINK.get()
        if listener is not None:
            listener(piece)
        if self.on_text is not None:
            self.on_text(piece)

    async def aclose(self) -> None:
        await self.client.aclose()

    # Each adapter fills these in.
    def request_body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def read_reply(self, data: Any) -> ModelResponse:
        raise NotImplementedError

    async def read_stream(self, reply: httpx.Response, request: ModelRequest) -> ModelResponse:
        """Read a streamed reply; with `request.stop_at_action`, stop after its action."""
        raise NotImplementedError
