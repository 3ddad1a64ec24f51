"""Layered output parsing: native tool calls, tagged calls, ReAct text, JSON in text,
pythonic calls, and plain text as the final answer; and where a streaming reply's first
complete action ends (`ActionEnd`, for the model adapters that stop generating there)."""

from loopwright.parsing._action_end import ActionEnd, action_end, action_text
from loopwright.parsing._chain import DEFAULT_PARSERS, ReplyReading, parse_reply, read_reply
from loopwright.parsing._layers import (
    JsonInTextParser,
    NativeToolCallParser,
    PythonicCallParser,
    TaggedCallParser,
    split_thinking,
)
from loopwright.parsing._react import PlainTextParser, ReActTextParser
from loopwright.parsing._result import (
    ParsedAction,
    ParsedFinal,
    ParseFailure,
    ParseOutcome,
    ReplyParser,
)
from loopwright.parsing.messages import response_from_message

__all__ = [
    "DEFAULT_PARSERS",
    "ActionEnd",
    "JsonInTextParser",
    "NativeToolCallParser",
    "ParseFailure",
    "ParseOutcome",
    "ParsedAction",
    "ParsedFinal",
    "PlainTextParser",
    "PythonicCallParser",
    "ReActTextParser",
    "ReplyParser",
    "ReplyReading",
    "TaggedCallParser",
    "action_end",
    "action_text",
    "parse_reply",
    "read_reply",
    "response_from_message",
    "split_thinking",
]
