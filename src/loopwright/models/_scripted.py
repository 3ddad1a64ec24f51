"""ScriptedModel: a public test double that replays a fixed list of replies."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from loopwright.errors import ConfigurationError, ScriptExhaustedError
from loopwright.messages import CHARS_PER_TOKEN, ModelRequest, ModelResponse, ToolCall, Usage
from loopwright.models._base import TextSink, ToolMode
from loopwright.models._stop import StreamedText, cut_at_action

ScriptItem = str | dict[str, Any] | ModelResponse


def _call_from_dict(data: dict[str, Any], index: int) -> ToolCall:
    function = data.get("function", data)
    arguments = function.get("arguments", function.get("input", {}))
    if isinstance(arguments, str):
        arguments = json.loads(arguments or "{}")
    call_id = data.get("id") or f"call_{index}_{uuid.uuid4().hex[:8]}"
    return ToolCall(id=str(call_id), name=str(function["name"]), arguments=dict(arguments))


def _usage_of(text: str) -> Usage:
    """A scripted reply's usage: no input counted, its text's estimated tokens out."""
    return Usage(0, max(1, len(text) // CHARS_PER_TOKEN))


REACT_KEYS = frozenset({"thought", "action", "action_input", "final_answer"})
"""The keys of a ReAct object (`{"thought": ..., "action": ..., "action_input": ...}`)."""
MESSAGE_KEYS = frozenset({"role", "content", "tool_calls"})
"""The keys of an assistant message object (`{"content": ..., "tool_calls": [...]}`)."""
REPLY_FORMS = (
    'a reply is a string (the model\'s text), a ReAct object ({"thought": "...", '
    '"action": "echo", "action_input": {...}} or {"thought": "...", "final_answer": "..."}) '
    'or an assistant message ({"content": "...", "tool_calls": [...]})'
)


def _text_reply(text: str) -> ModelResponse:
    return ModelResponse(text=text, usage=_usage_of(text), model="scripted")


def _reply_from_object(item: dict[str, Any], position: int) -> ModelResponse:
    keys = set(item)
    if keys & REACT_KEYS and not keys & MESSAGE_KEYS:
        return _text_reply(json.dumps(item, ensure_ascii=False))  # as a model writes it
    if not keys & MESSAGE_KEYS:
        shown = ", ".join(sorted(keys)) or "no keys"
        raise ConfigurationError(f"reply {position + 1} is an object with {shown}: {REPLY_FORMS}")
    calls = tuple(_call_from_dict(c, i) for i, c in enumerate(item.get("tool_calls") or ()))
    text = item.get("content") or ""
    return ModelResponse(text=text, tool_calls=calls, usage=_usage_of(text), model="scripted")


def response_from_item(item: ScriptItem, position: int = 0) -> ModelResponse:
    """A reply from a script item: a string (the model's text), a ReAct object (written as
    the model would write it) or an assistant message object (text and native tool calls)."""
    if isinstance(item, ModelResponse):
        return item
    if isinstance(item, str):
        return _text_reply(item)
    if isinstance(item, dict):
        return _reply_from_object(item, position)
    raise ConfigurationError(f"reply {position + 1} is a {type(item).__name__}: {REPLY_FORMS}")


class ScriptedModel:
    """Replays `replies` in order and records every request it receives.

    It fails loudly: asking for a reply after the last one raises ScriptExhaustedError,
    and `check_used()` (called by the agent at the end of every run; with `strict`)
    raises if replies are left over.
    """

    def __init__(
        self,
        replies: Iterable[ScriptItem],
        *,
        name: str = "scripted",
        tool_mode: ToolMode = "prompted",
        strict: bool = True,
        stream_chars: int = 0,
    ) -> None:
        self._replies = [response_from_item(r, i) for i, r in enumerate(replies)]
        self._name = name
        self._tool_mode: ToolMode = tool_mode
        self.strict = strict
        self.stream_chars = stream_chars
        """When streamed (someone listens to the run), hand out each reply's text in pieces
        of this many characters; 0: no pieces (the reply comes whole)."""
        self.requests: list[ModelRequest] = []
        self.position = 0

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> ScriptedModel:
        """Load a JSON list of replies: strings, ReAct objects or assistant message objects."""
        file = Path(path)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigurationError(f"script file not found: {file}") from None
        except OSError as exc:
            raise ConfigurationError(f"cannot read script file {file}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{file}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        if not isinstance(data, list):
            raise ConfigurationError(f"{file}: expected a JSON list of replies")
        kwargs.setdefault("name", f"scripted:{path}")
        try:
            return cls(data, **kwargs)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{file}: {exc}") from None

    @property
    def name(self) -> str:
        return self._name

    @property
    def preferred_tool_mode(self) -> ToolMode:
        return self._tool_mode

    @property
    def remaining(self) -> int:
        return len(self._replies) - self.position

    def resume_after(self, replies: int) -> None:
        """Go on after the `replies` the run's log already served (resume): a script not
        yet that far (given again, as another process would) skips them; one that served
        them itself (the same agent resuming in this process) goes on where it is."""
        self.position = max(self.position, min(len(self._replies), replies))

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self.position >= len(self._replies):
            raise ScriptExhaustedError(
                f"ScriptedModel ran out of replies: asked for reply {self.position + 1} "
                f"of {len(self._replies)}"
            )
        reply = self._replies[self.position]
        self.position += 1
        return (
            cut_at_action(reply, calls_in_a_row=request.calls_in_a_row)
            if request.stop_at_action
            else reply
        )

    async def complete_streaming(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """The reply's text in pieces of `stream_chars`, read as an adapter reads a stream:
        asked to stop at the action (`request.stop_at_action`), no piece goes past it."""
        reply = await self.complete(request)
        size = self.stream_chars
        if size > 0:
            whole = self._replies[self.position - 1].text
            streamed = StreamedText(request, on_text)
            for start in range(0, len(whole), size):
                if streamed.add(whole[start : start + size]):
                    break
                await asyncio.sleep(0)  # as a stream does: the listener runs in between
        return reply

    def check_used(self, *, completed: bool) -> None:
        """At a run's end: a completed run must have used every reply (when `strict`)."""
        if completed and self.strict:
            self.assert_exhausted()

    def assert_exhausted(self) -> None:
        if self.remaining:
            raise ScriptExhaustedError(
                f"ScriptedModel has {self.remaining} unused "
                f"repl{'y' if self.remaining == 1 else 'ies'} of {len(self._replies)}"
            )


def stand_in_model(name: str, tool_mode: ToolMode = "prompted") -> ScriptedModel:
    """A model that is never asked: it carries a run's model name and tool mode where the
    replies come from elsewhere (a recorded log on replay, a prompt preview)."""
    return ScriptedModel([], name=name, tool_mode=tool_mode, strict=False)
