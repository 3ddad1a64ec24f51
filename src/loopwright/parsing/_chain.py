"""The layered parser chain: the first layer that claims a reply decides what it means."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

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
    return _first(response, parsers)[0]


@dataclass(frozen=True)
class ReplyReading:
    """What the chain made of a reply, and how (`loopwright parse` shows it)."""

    outcome: ParseOutcome
    layer: str | None
    """The layer that read the reply (None: none did, or one failed)."""
    repaired: bool
    """Malformed JSON in the reply was repaired to read it."""


def read_reply(
    response: ModelResponse, parsers: Sequence[ReplyParser] = DEFAULT_PARSERS
) -> ReplyReading:
    """`parse_reply`, with the layer that read the reply and whether that took a repair
    (the chain read again with every repairing layer reading only valid JSON)."""
    outcome, layer = _first(response, parsers)
    strict = []
    for parser in parsers:
        if getattr(parser, "repair", False):
            parser = copy.copy(parser)
            parser.repair = False  # type: ignore[attr-defined]
        strict.append(parser)
    return ReplyReading(outcome, layer, _first(response, strict) != (outcome, layer))


def _first(
    response: ModelResponse, parsers: Sequence[ReplyParser]
) -> tuple[ParseOutcome, str | None]:
    for parser in parsers:
        try:
            outcome = parser.parse(response)
        except Exception as exc:  # a parser bug must not crash a run
            message = f"the {parser.name} parser failed ({exc}): {EXPECTED_FORMAT}"
            return ParseFailure(message), None
        if outcome is not None:
            return outcome, parser.name
    return ParseFailure(f"the reply could not be read: {EXPECTED_FORMAT}"), None
