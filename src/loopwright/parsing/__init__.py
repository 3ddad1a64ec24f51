"""Layered output parsing: native tool calls, JSON in text, <tool_call> XML, Action: text."""

from loopwright.parsing._chain import DEFAULT_PARSERS, parse_reply
from loopwright.parsing._result import (
    ParsedAction,
    ParsedFinal,
    ParseFailure,
    ParseOutcome,
    ReplyParser,
)

__all__ = [
    "DEFAULT_PARSERS",
    "ParseFailure",
    "ParseOutcome",
    "ParsedAction",
    "ParsedFinal",
    "ReplyParser",
    "parse_reply",
]
