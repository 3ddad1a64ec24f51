"""Text for the operator's terminal: what a model, a tool or a file wrote, with every
control character shown as a visible escape instead of acting on the terminal.

A tool's output, the model's thought and answer, a task file's message: none is trusted,
and each can hold bytes a terminal obeys (clear the screen, move the cursor back over a
line, `\\r` to overwrite one, OSC 52 to write the clipboard, OSC 8 hidden hyperlinks,
bidirectional overrides that reorder what is read). `visible` turns each into its escape
(`\\x1b`, `\\r`, `\\u202e`), keeping newlines and tabs; `markup` also escapes rich markup
(`[red]`), for text printed through a rich console (which must have `emoji=False`, or
`:x:` becomes an emoji).
"""

from __future__ import annotations

import re

from rich.markup import escape

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""The bidirectional marks, embeddings, overrides and isolates."""

_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff" + _BIDI + "]|\r(?!\n)"
)
"""C0 (but tab and newline), DEL, C1, the line and paragraph separators, lone surrogates
(no terminal encoding can write one), the bidi controls, and a carriage return that does
not end a line."""


def _escape_one(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control character as a visible escape; newlines and tabs kept
    (a Windows line end, `\\r\\n`, becomes `\\n`)."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_escape_one, text.replace("\r\n", "\n"))


def markup(text: str) -> str:
    """`visible(text)`, safe to put inside rich markup (its `[` escaped)."""
    return escape(visible(text))
