"""Layered output parsing: native tool calls, tagged calls, ReAct text, JSON in text,
pythonic calls, and plain text as the final answer; and where a streaming reply's first
complete action ends (`ActionEnd`, for the model adapters that stop generating there)."""

from loopwright.parsing._action_end import ActionEnd, action_text
from loopwright.parsing._chain import DEFAULT_PARSERS, parse_reply
from loopwright.parsing._layers import (
    JsonInTextParser,
    NativeToolCallParser,
    PythonicCallParser,
    TaggedCallParser,
)
from loopwright.parsing._react import PlainTextParser, ReActTextParser
from loopwright.parsing._result import ParsedAction, ParsedFinal, ParseFailure, ReplyParser

__all__ = [
    "DEFAULT_PARSERS",
    "ActionEnd",
    "JsonInTextParser",
    "NativeToolCallParser",
    "ParseFailure",
    "ParsedAction",
    "ParsedFinal",
    "PlainTextParser",
    "PythonicCallParser",
    "ReActTextParser",
    "ReplyParser",
    "TaggedCallParser",
    "action_text",
    "parse_reply",
]
