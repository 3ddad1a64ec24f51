"""The layered parser chain. Minimal first version; full layers land with the parsing work."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from loopwright.messages import ModelResponse, ToolCall
from loopwright.parsing._result import (
    ParsedAction,
    ParsedFinal,
    ParseFailure,
    ParseOutcome,
    ReplyParser,
)


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


class NativeToolCallParser:
    name = "native"

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        if not response.tool_calls:
            return None
        return ParsedAction(response.tool_calls, thought=response.text.strip() or None)


class JsonContentParser:
    name = "json"

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        match = re.search(r"\{.*\}", response.text, re.S)
        if not match:
            return None
        try:
            data: Any = json.loads(match.group(0))
        except json.JSONDecodeError:
            return None
        if not isinstance(data, dict):
            return None
        thought = data.get("thought")
        if "final_answer" in data:
            return ParsedFinal(str(data["final_answer"]), thought)
        name = data.get("action") or data.get("name")
        if isinstance(name, str):
            args = data.get("action_input", data.get("arguments", data.get("parameters", {})))
            call = ToolCall(new_call_id(), name, args if isinstance(args, dict) else {})
            return ParsedAction((call,), thought)
        return None


class PlainTextFinalParser:
    name = "text"

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        text = response.text.strip()
        return ParsedFinal(text) if text else None


DEFAULT_PARSERS: tuple[ReplyParser, ...] = (
    NativeToolCallParser(),
    JsonContentParser(),
    PlainTextFinalParser(),
)


def parse_reply(
    response: ModelResponse, parsers: Sequence[ReplyParser] = DEFAULT_PARSERS
) -> ParseOutcome:
    """Run the chain; the first parser that claims the reply decides."""
    for parser in parsers:
        outcome = parser.parse(response)
        if outcome is not None:
            return outcome
    return ParseFailure("the reply was empty: answer with a tool call or a final answer")
