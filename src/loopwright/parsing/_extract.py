"""Find JSON in a model's text: code fences, balanced braces in prose, truncated tails.

Malformed JSON (single quotes, trailing commas, comments, Python literals, truncation) is
repaired with the json-repair library, but only for snippets that name a known key, so
repair never turns plain prose into a bogus action.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

MAX_CANDIDATES = 20
MAX_REPAIR_CHARS = 200_000
_FENCE = re.compile(r"```[ \t]*([\w-]*)[ \t]*\n(.*?)(?:```|\Z)", re.S)
_KNOWN_KEY = re.compile(
    r"""["']?(action|action_input|final_answer|name|arguments|parameters|tool|function|"""
    r"""tool_calls|thought|answer)["']?\s*:""",
)


def fenced_blocks(text: str) -> Iterator[tuple[str, str]]:
    """(language, body) of each ``` fenced block (an unclosed last fence runs to the end)."""
    for match in _FENCE.finditer(text):
        yield match.group(1).lower(), match.group(2)


_RAW = json.JSONDecoder()
_OPENING = re.compile(r"[\[{]")


def _closing_index(text: str, start: int) -> int | None:
    """Index of the bracket closing the one at `start`, honouring strings; None if none."""
    stack: list[str] = []
    pairs = {"{": "}", "[": "]"}
    in_string = False
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in pairs:
            stack.append(pairs[char])
        elif char in "}]":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return index
    return None


NOT_READ = object()
"""A snippet's value is not known yet: `decode` it."""


def json_snippets(text: str) -> Iterator[tuple[str, Any]]:
    """Top-level {...} / [...] snippets in order, each with its value when it is valid JSON
    (read once, by the decoder that found its end: most replies), else NOT_READ. An
    unclosed one runs to the end of the text."""
    position = 0
    found = 0
    while found < MAX_CANDIDATES:
        match = _OPENING.search(text, position)
        if match is None:
            return
        start = match.start()
        try:
            value, after = _RAW.raw_decode(text, start)
            end: int | None = after - 1
        except (ValueError, RecursionError):
            value, end = NOT_READ, _closing_index(text, start)
        if end is None:
            yield text[start:], NOT_READ
            return
        yield text[start : end + 1], value
        found += 1
        position = end + 1


def decode(snippet: str, *, repair: bool = True) -> Any | None:
    """The JSON value of a snippet, repaired if it is malformed but clearly meant as JSON
    (with `repair`)."""
    try:
        return json.loads(snippet)
    except (json.JSONDecodeError, RecursionError):
        pass
    if not repair or len(snippet) > MAX_REPAIR_CHARS or not _KNOWN_KEY.search(snippet):
        return None
    try:
        value = _repair(snippet)
    except Exception:  # the repair library can fail on adversarial input
        return None
    return value if isinstance(value, dict | list) and value else None


def repair_arguments(raw: str) -> dict[str, Any] | None:
    """A tool call's arguments from a JSON object string, repaired when it is malformed or
    cut off (`{"a": 2, "b": 3`): the same repair as JSON in text. None: not an object."""
    text = raw.strip()
    if not text.startswith("{") or len(text) > MAX_REPAIR_CHARS:
        return None
    try:
        value = _repair(text)
    except Exception:  # the repair library can fail on adversarial input
        return None
    return value if isinstance(value, dict) else None


def _repair(text: str) -> Any:
    """json-repair's reading of malformed JSON; imported on the first malformed reply (most
    runs have none; ~6 ms of every command's start-up, python -X importtime)."""
    import json_repair

    return json_repair.loads(text)
