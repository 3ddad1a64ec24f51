"""References to long tool results: what the workflow holds instead of the text.

A tool result of REF_MIN_CHARS or more is stored once in the content store (by its
SHA-256, per run) and the workflow gets a *reference*: the result's first characters and a
marker naming the rest, `⟦loopwright-ref:N:DIGEST⟧`. The loop treats it as the result's
text: it goes in the conversation, in the events and in the completed steps, and two equal
results have equal references (the no-progress policy compares them). Whatever leaves the
workflow is expanded again by an activity (the model's request, the stored events), so the
model, the event log and `runs show` see the text, and the history sees ~600 characters
instead of the whole result, once per use.

The head is long enough that every summary the loop makes of a result (160 characters in
an event, 200 in prompted mode's recap) is the same as the whole text's. A run with a
context window keeps its results inline: fitting the conversation counts characters.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from loopwright.agent._conversation import messages_digest
from loopwright.messages import Message

REF_MIN_CHARS = 2048
HEAD_CHARS = (256, 512, 1024)
SUMMARY_SAFE = 201
"""A head whose whitespace-flattened text is at least this long summarizes like the whole
text (the longest summary the loop makes is 200 characters)."""
MARKER = re.compile(r"\u27e6loopwright-ref:(\d+):([0-9a-f]{64})\u27e7")

Lookup = Callable[[Iterable[str]], dict[str, str]]
"""Digests -> the stored texts (of one run)."""


def digest_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def reference(text: str, *, inline: bool = False) -> tuple[str, str] | None:
    """(the reference that stands for `text`, its digest); None when `text` stays inline
    (short, a run that fits its conversation to a window, or a head of mostly spaces)."""
    if inline or len(text) < REF_MIN_CHARS or MARKER.search(text):
        return None
    for size in HEAD_CHARS:
        head = text[:size]
        if len(" ".join(head.split())) >= SUMMARY_SAFE:
            digest = digest_of(text)
            return f"{head}\u27e6loopwright-ref:{size}:{digest}\u27e7", digest
    return None


def digests_in(value: Any) -> set[str]:
    """The digests referenced anywhere in a JSON value."""
    found: set[str] = set()
    if isinstance(value, str):
        if "\u27e6" in value:
            found.update(m.group(2) for m in MARKER.finditer(value))
    elif isinstance(value, dict):
        for item in value.values():
            found |= digests_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found |= digests_in(item)
    return found


def expand(value: Any, texts: dict[str, str]) -> Any:
    """`value` with every reference replaced by its text (`texts`: digest -> text)."""
    if isinstance(value, str):
        if "\u27e6" not in value:
            return value

        def tail(match: re.Match[str]) -> str:
            text = texts.get(match.group(2))
            return match.group(0) if text is None else text[int(match.group(1)) :]

        return MARKER.sub(tail, value)
    if isinstance(value, dict):
        return {key: expand(item, texts) for key, item in value.items()}
    if isinstance(value, list):
        return [expand(item, texts) for item in value]
    return value


NOTE_HEAD = "[Iteration "


def request_digest(messages: list[Message], tool_names: tuple[str, ...]) -> str | None:
    """The loop's fingerprint of a request (agent/_conversation.py) over its whole texts.

    The workflow's loop fingerprints the request it holds, references included; the stored
    `model_response` event gets this one instead, the embedded engine's for the same run
    (so `runs replay` finds no divergence). The iteration note is the newest message's
    last paragraph; None if there is none."""
    if len(messages) < 2:
        return None
    last = messages[-1]
    cut = last.content.rfind("\n\n" + NOTE_HEAD)
    if cut >= 0:
        content, note = last.content[:cut], last.content[cut + 2 :]
    elif last.content.startswith(NOTE_HEAD):
        content, note = "", last.content
    else:
        return None
    cut_last = Message(last.role, content, last.tool_calls, last.tool_call_id, last.name)
    return messages_digest(messages[0].content, [*messages[1:-1], cut_last], note, tool_names)
