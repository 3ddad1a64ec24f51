"""Every string a model can produce, stored and read back exactly by both stores.

Two kinds of character do not survive as they are: NUL (`\\x00`: PostgreSQL's text holds
none) and a lone surrogate (`\\ud800`: JSON from a provider can carry one, and neither
store's driver encodes it as UTF-8).

- An event's stored line is JSON: NUL is `\\u0000` there, and the events' codec writes a
  lone surrogate as its JSON escape too; `storable_line` does the same for a row's JSON
  (its options and tools).
- A run row's free text (request, answer, reason, ...) that holds either character, or
  starts with `ESCAPED` (so no stored text is ever misread), is stored as `ESCAPED`
  followed by its ASCII JSON, and `row_text` reads it back. Text without them, all the
  text that is ever written in practice, is stored as it is.
"""

from __future__ import annotations

import json
import re

ESCAPED = "\ufdd0"
"""The first character of a stored text that is JSON: a Unicode noncharacter, which no
interchanged text should hold."""
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def storable_line(line: str) -> str:
    """A JSON text with each lone surrogate as its `\\uXXXX` escape (decoded the same)."""
    if line.isascii() or _SURROGATE.search(line) is None:
        return line
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", line)


def storable_text(text: str | None) -> str | None:
    """A row's text as stored: as it is, or escaped (see the module's docstring)."""
    if text is None or (text.isascii() and "\x00" not in text):
        return text
    if text.startswith(ESCAPED) or _UNSTORABLE.search(text) is not None:
        return ESCAPED + json.dumps(text)
    return text


def row_text(stored: str | None) -> str | None:
    """A row's text as it was before `storable_text`."""
    if stored is None or not stored.startswith(ESCAPED):
        return stored
    text: str = json.loads(stored[len(ESCAPED) :])
    return text
