"""Layered output parsing: native tool calls, tagged calls, ReAct text, JSON in text,
pythonic calls, and plain text as the final answer."""

from loopwright.parsing._chain import DEFAULT_PARSERS, parse_reply
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
    "TaggedCallParser",
    "parse_reply",
    "response_from_message",
    "split_thinking",
]
