"""Ending a reply once its first action is written (`ModelRequest.stop_at_action`).

A streamed reply is read as it arrives (`StreamedText`): once loopwright.parsing's
`ActionEnd` has a complete action, the adapter stops generating (the embedded model stops
llama.cpp; an HTTP adapter closes the stream, which llama.cpp's server and Ollama take as
the end of the request) and the reply ends there, `finish_reason="action_complete"`. Native
tool calls are kept whole, however many: text that follows them ends the reply.

A reply that is not streamed (`stream=False` on an HTTP adapter) is asked to stop with
`STOP_SEQUENCES` instead; `closed_after_stop` gives the JSON object its closing brace back
when the sequence that ended the reply took it.
"""

from __future__ import annotations

import dataclasses

from loopwright.messages import CHARS_PER_TOKEN, ModelRequest, ModelResponse, Usage
from loopwright.models._base import TextSink
from loopwright.parsing import ActionEnd, action_text
from loopwright.parsing._action_end import action_end

ACTION_COMPLETE = "action_complete"
"""The `finish_reason` of a reply ended after its first complete action."""
STOP_SEQUENCES = ("}\n{", "}\n\n{", "\nObservation:", "\n```\n```")
"""Where a reply that cannot be streamed is told to stop (at most four: OpenAI's limit):
the start of a second JSON object, the invented observation of the ReAct format, a second
code block. A matched sequence is left out of the text, so `}\n{` takes the brace that
closes the first object; `closed_after_stop` puts it back."""


def stop_sequences(request: ModelRequest) -> list[str]:
    """The `STOP_SEQUENCES` a whole reply to `request` is told to stop at: without the start
    of a second JSON object when the request keeps calls in a row (`calls_in_a_row`)."""
    if request.calls_in_a_row:
        return [s for s in STOP_SEQUENCES if not s.endswith("{")]
    return list(STOP_SEQUENCES)


class StreamedText:
    """A streamed reply's text: each piece goes to `emit` as it arrives; when the request
    asks (`stop_at_action`), `add` says when the reply's first action is complete, and
    what follows it is neither kept nor handed out."""

    __slots__ = ("_emit", "_watch", "calls_seen", "cut", "parts", "pieces")

    def __init__(self, request: ModelRequest, emit: TextSink) -> None:
        self._emit = emit
        several = request.calls_in_a_row
        self._watch = ActionEnd(calls_in_a_row=several) if request.stop_at_action else None
        self.parts: list[str] = []
        self.pieces = 0
        """Pieces with text (one per generated token on llama.cpp and its servers)."""
        self.cut = False
        """The reply was ended after its first complete action."""
        self.calls_seen = False

    def add(self, piece: str) -> bool:
        """Take a piece of text; True once the reply should end here."""
        if not piece:
            return False
        self.pieces += 1
        watch = self._watch
        if watch is not None and self.calls_seen and piece.strip():
            self.cut = True  # text after native tool calls: the calls are all there
            return True
        if watch is None or self.calls_seen:
            self._keep(piece)
            return False
        before = len(watch.text)
        end = watch.feed(piece)
        if end is None:
            self._keep(piece)
            return False
        if end < before:  # whitespace after a closing tag went out before the end was known
            self.parts = [watch.text[:end]]
        self._keep(piece[: max(0, end - before)] + watch.closing)
        self.cut = True
        return True

    def native_call(self) -> None:
        """A native tool call (or a piece of one) arrived."""
        self.calls_seen = True

    def _keep(self, piece: str) -> None:
        if piece:
            self.parts.append(piece)
            self._emit(piece)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def finish_reason(self, reported: str | None) -> str | None:
        return ACTION_COMPLETE if self.cut else reported

    def usage(self, reported: Usage) -> Usage:
        """The server's count, else (a stream ended early carries none) one token a piece
        out and nothing in (`with_usage` estimates it)."""
        if reported.input_tokens or reported.output_tokens or not self.cut:
            return reported
        return Usage(0, self.pieces)


def cut_at_action(response: ModelResponse, *, calls_in_a_row: bool = False) -> ModelResponse:
    """A whole reply ended after its first complete action, as a streamed one would be (the
    scripted model's replies): text, estimated usage and `finish_reason`."""
    if response.tool_calls:  # the calls are the action: nothing in the text to cut
        return response
    text = action_text(response.text, calls_in_a_row=calls_in_a_row)
    if text is None:
        return response
    usage = response.usage
    if text != response.text:
        usage = dataclasses.replace(usage, output_tokens=max(1, len(text) // CHARS_PER_TOKEN))
    return dataclasses.replace(response, text=text, usage=usage, finish_reason=ACTION_COMPLETE)


def closed_after_stop(response: ModelResponse) -> ModelResponse:
    """A reply ended by one of `STOP_SEQUENCES`: when `}\\n{` took the brace that closes
    its first action, the brace is put back (and the reply says it ended at its action)."""
    text = response.text
    if response.tool_calls or action_end(text) is not None:
        return response
    closed = text.rstrip() + "}"
    if action_end(closed) != len(closed):
        return response
    return dataclasses.replace(response, text=closed, finish_reason=ACTION_COMPLETE)
