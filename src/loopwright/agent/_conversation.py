"""The conversation sent to the model (a run's transcript), kept within the context window.

Token counts are tracked per message as messages are added (estimated at ~4 characters
per token), so fitting the window never re-counts the whole history. When over the
limit, the oldest observations are shortened first, keeping their head and tail and
saying what was cut; the system prompt and the newest turns are never cut.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

from loopwright.messages import CHARS_PER_TOKEN, Message, MessageHistory

PROTECTED_TAIL = 2
MIN_KEEP_CHARS = 200
NOTE_CHARS = 80
"""Room for the "[... N characters cut ...]" note that replaces the cut text."""


def estimate_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 4


def shorten(text: str, keep_chars: int) -> str:
    """Head and tail of `text`, with a note saying how much was cut."""
    if len(text) <= keep_chars:
        return text
    head = keep_chars * 2 // 3
    tail = keep_chars - head
    cut = len(text) - head - tail
    return (
        f"{text[:head]}\n[... {cut:,} characters cut to fit the context window ...]\n{text[-tail:]}"
    )


class Transcript:
    """The messages a run sends the model after its system prompt, and what fitting them to
    the context window needs (each message's token estimate, the full text of the
    observations that may still be shortened). A follow-up turn starts with the transcript
    of the turn before it (`following`)."""

    __slots__ = (
        "_chain",
        "_cuttable",
        "_notes",
        "_shared",
        "_tokens",
        "messages",
        "system",
        "total_tokens",
    )

    def __init__(self, system_prompt: str, *, fingerprinted: bool = True) -> None:
        self.system = Message.system(system_prompt)
        self.messages: list[Message] = []
        self._tokens: list[int] = []
        self._cuttable: dict[int, str] = {}
        """Observation index -> its full text, while it can still be shortened further."""
        self._notes: dict[int, str] = {}
        """Observation index -> the note kept after it (`keep_note`), which is not cut."""
        self.total_tokens = estimate_tokens(system_prompt)
        self._chain: list[bytes] | None = [_link(b"", self.system)] if fingerprinted else None
        """The request fingerprint's hash chain (None: nobody reads the fingerprint)."""
        self._shared = False
        """A request's `MessageHistory` reads `messages`: copy it before rewriting one."""

    @classmethod
    def following(
        cls, earlier: Transcript, system_prompt: str, *, fingerprinted: bool = True
    ) -> Transcript:
        """A new run's transcript that starts where `earlier` (the turn before) ended: its
        messages as they were sent (so a prompt cache reuses them), its observations still
        shortened as they would have been, under this run's system prompt. `earlier` is
        not changed."""
        transcript = cls(system_prompt, fingerprinted=fingerprinted)
        transcript.messages = list(earlier.messages)
        transcript._tokens = list(earlier._tokens)
        transcript._cuttable = dict(earlier._cuttable)
        transcript._notes = dict(earlier._notes)
        transcript.total_tokens += sum(earlier._tokens)
        chain = transcript._chain
        if chain is not None:
            for message in transcript.messages:
                chain.append(_link(chain[-1], message))
        return transcript

    def to_dict(self) -> dict[str, Any]:
        """The messages and what fitting them needs, as JSON data (not the system prompt:
        a transcript taken up by a follow-up gets that run's)."""
        return {
            "messages": [message.to_dict() for message in self.messages],
            "observations": {str(index): text for index, text in self._cuttable.items()},
            "notes": {str(index): note for index, note in self._notes.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Transcript:
        """`to_dict`'s inverse (under an empty system prompt, without a fingerprint)."""
        transcript = cls("", fingerprinted=False)
        for message in data["messages"]:
            transcript.append(Message.from_dict(message))
        transcript._cuttable = {int(i): str(t) for i, t in data["observations"].items()}
        transcript._notes = {int(i): str(n) for i, n in data["notes"].items()}
        return transcript

    def append(self, message: Message, *, observation: bool = False) -> None:
        tokens = estimate_tokens(message.content) + 8 * len(message.tool_calls)
        if observation:
            self._cuttable[len(self.messages)] = message.content
        self.messages.append(message)
        self._tokens.append(tokens)
        self.total_tokens += tokens
        if self._chain is not None:
            self._chain.append(_link(self._chain[-1], message))

    def fit(self, limit: int | None) -> int:
        """Shorten old observations until the conversation fits; returns how many were cut."""
        if limit is None:
            return 0
        shortened = 0
        protected_from = len(self.messages) - PROTECTED_TAIL
        for index, original in list(self._cuttable.items()):
            if self.total_tokens <= limit:
                break
            if index >= protected_from:
                break
            excess_chars = (self.total_tokens - limit) * 4
            message = self.messages[index]
            note = self._notes.get(index, "")
            size = len(message.content) - len(note)
            keep = max(MIN_KEEP_CHARS, size - excess_chars - NOTE_CHARS)
            if keep >= size:
                continue
            # shortened again from the full text as the run grows, so the note stays exact
            content = shorten(original, keep) + note
            self._replace(index, dataclasses.replace(message, content=content))
            if keep == MIN_KEEP_CHARS:
                del self._cuttable[index]
            shortened += 1
        return shortened

    def _replace(self, index: int, message: Message) -> None:
        tokens = estimate_tokens(message.content) + 8 * len(message.tool_calls)
        self.total_tokens += tokens - self._tokens[index]
        self._tokens[index] = tokens
        if self._shared:  # earlier requests keep the messages they were sent
            self.messages = list(self.messages)
            self._shared = False
        self.messages[index] = message
        if self._chain is not None:
            del self._chain[index + 1 :]
            for later in self.messages[index:]:
                self._chain.append(_link(self._chain[-1], later))

    def digest(self, note: str | None, tool_names: Sequence[str]) -> str:
        """A fingerprint of the request: a hash chain, so it costs the same at any length."""
        if self._chain is None:
            raise ValueError("this conversation keeps no fingerprint (fingerprinted=False)")
        tail = f"{note}|{','.join(tool_names)}".encode("utf-8", "surrogatepass")
        return hashlib.sha256(self._chain[-1] + tail).hexdigest()[:16]

    def keep_note(self, note: str) -> None:
        """`note` ends the newest message for good (revision 5): the next request then
        starts with this one, reply included, so a prompt cache reuses all of it instead of
        evaluating again from where a moved note was.

        Changed in place, without the copy `_replace` makes while a history is out: no
        request sent so far holds the newest message (each reply adds a message after the
        request it answers), so none of them sees the change."""
        if not note or not self.messages:
            return
        index = len(self.messages) - 1
        last = self.messages[index]
        noted = _with_note(last, note)
        self.messages[index] = noted
        tokens = estimate_tokens(noted.content) + 8 * len(last.tool_calls)
        self.total_tokens += tokens - self._tokens[index]
        self._tokens[index] = tokens
        if index in self._cuttable:
            self._notes[index] = noted.content[len(last.content) :]
        if self._chain is not None:
            self._chain[-1] = _link(self._chain[-2], self.messages[index])

    def request_messages(self, note: str | None = None) -> MessageHistory:
        """System prompt + history; `note` goes at the end of the newest message only."""
        history = self.messages
        self._shared = True
        if not note or not history:
            return MessageHistory(self.system, history, len(history))
        noted = _with_note(history[-1], note)
        return MessageHistory(self.system, history, len(history) - 1, noted)


def _with_note(message: Message, note: str) -> Message:
    """`message` with `note` after its content, a blank line between them."""
    separator = "\n\n" if message.content else ""
    content = f"{message.content}{separator}{note}"
    return Message(message.role, content, message.tool_calls, message.tool_call_id, message.name)


def messages_digest(
    system_prompt: str, messages: Sequence[Message], note: str | None, tool_names: Sequence[str]
) -> str:
    """The fingerprint `Transcript.digest` gives a request of `messages` after
    `system_prompt` (what a run's `model_response` records), from the messages alone."""
    conversation = Transcript(system_prompt)
    for message in messages:
        conversation.append(message)
    return conversation.digest(note, tool_names)


def _link(previous: bytes, message: Message) -> bytes:
    encoded = repr((message.role, message.content, message.tool_calls, message.tool_call_id))
    return hashlib.sha256(previous + encoded.encode("utf-8")).digest()
