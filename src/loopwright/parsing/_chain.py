"""The layered parser chain: the first layer that claims a reply decides what it means."""

from __future__ import annotations

from collections.abc import Sequence

from loopwright.messages import ModelResponse
from loopwright.parsing._layers import (
    JsonInTextParser,
    NativeToolCallParser,
    PythonicCallParser,
    TaggedCallParser,
)
from loopwright.parsing._react import EXPECTED_FORMAT, PlainTextParser, ReActTextParser
from loopwright.parsing._result import ParseFailure, ParseOutcome, ReplyParser

DEFAULT_PARSERS: tuple[ReplyParser, ...] = (
    NativeToolCallParser(),
    TaggedCallParser(),
    ReActTextParser(),
    JsonInTextParser(),
    PythonicCallParser(),
    PlainTextParser(),
)


def parse_reply(
    response: ModelResponse, parsers: Sequence[ReplyParser] = DEFAULT_PARSERS
) -> ParseOutcome:
    """Run the chain. Never raises: anything unreadable is a ParseFailure."""
    for parser in parsers:
        try:
            outcome = parser.parse(response)
        except Exception as exc:  # a parser bug must not crash a run
            return ParseFailure(f"the {parser.name} parser failed ({exc}): {EXPECTED_FORMAT}")
        if outcome is not None:
            return outcome
    return ParseFailure(f"the reply could not be read: {EXPECTED_FORMAT}")
