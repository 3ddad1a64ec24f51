"""`Thought: / Action: / Action Input: / Final Answer:` text, and plain text as the answer."""

from __future__ import annotations

import re

from loopwright.messages import ModelResponse, ToolCall
from loopwright.parsing._extract import decode
from loopwright.parsing._layers import split_thinking
from loopwright.parsing._result import ParsedAction, ParsedFinal, ParseFailure, ParseOutcome
from loopwright.parsing._shapes import FINAL_ACTIONS

_OBSERVATION = re.compile(r"^\s*Observation\s*:", re.M | re.I)
_ACTION = re.compile(r"^[ \t]*Action[ \t]*:[ \t]*(.+)$", re.M | re.I)
_ACTION_INPUT = re.compile(r"^[ \t]*Action[ \t]+Input[ \t]*:[ \t]*(.*)", re.M | re.I | re.S)
_FINAL = re.compile(r"^[ \t]*Final[ \t]+Answer[ \t]*:[ \t]*(.*)", re.M | re.I | re.S)
_THOUGHT = re.compile(r"^[ \t]*Thought[ \t]*:[ \t]*", re.M | re.I)

EXPECTED_FORMAT = (
    'reply with one JSON object: {"thought": "...", "action": "<tool name>", '
    '"action_input": {...}} to call a tool, or {"thought": "...", "final_answer": "..."} '
    "to finish"
)


def _thought_before(text: str, end: int) -> str | None:
    thought = _THOUGHT.sub("", text[:end]).strip()
    return thought or None


def _arguments(raw: str, repair: bool) -> dict[str, object]:
    raw = raw.strip().strip("`").strip()
    if raw.startswith("json"):
        raw = raw[4:].strip()
    if not raw:
        return {}
    value = decode(raw, repair=repair) if raw[0] in "{[" else None
    return value if isinstance(value, dict) else {"input": raw}


class ReActTextParser:
    """The classic ReAct text format; text after a hallucinated `Observation:` is ignored."""

    name = "react"
    repair = True
    """Malformed JSON arguments are repaired (False: read only valid JSON)."""

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        if ":" not in response.text:  # every line this layer reads has a colon
            return None
        text, thinking = split_thinking(response.text)
        cut = _OBSERVATION.search(text)
        if cut is not None:
            text = text[: cut.start()]
        action = _ACTION.search(text)
        final = _FINAL.search(text)
        if action is not None and (final is None or action.start() < final.start()):
            name = action.group(1).strip().strip("`'\"").strip()
            rest = text[action.end() :]
            given = _ACTION_INPUT.search(rest)
            raw = given.group(1) if given else ""
            thought = _thought_before(text, action.start()) or thinking
            if name.lower() in FINAL_ACTIONS:
                return ParsedFinal(raw.strip(), thought)
            if not name:
                return ParseFailure(
                    "the reply has an `Action:` line with no tool name", kind="error"
                )
            call = ToolCall("call_0", name, _arguments(raw, self.repair))
            return ParsedAction((call,), thought)
        if final is not None:
            return ParsedFinal(
                final.group(1).strip(), _thought_before(text, final.start()) or thinking
            )
        return None


_EMPTY_FENCE = re.compile(r"```[ \t]*([\w-]*)[ \t]*\n?\s*```")


def _only_empty_fence(text: str) -> str | None:
    """The language of an empty code block the reply rests on (`"json"`, or `""`), when the
    text around it is nothing or a lead-in (`Here is my answer:`); else None."""
    fence = _EMPTY_FENCE.search(text)
    if fence is None:
        return None
    rest = (text[: fence.start()] + text[fence.end() :]).strip()
    if rest and not rest.endswith(":"):
        return None
    return fence.group(1)


class PlainTextParser:
    """Content with no action in it is the final answer; empty content, or an empty code
    block with at most a lead-in around it, is a parse error."""

    name = "text"

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        text, thinking = split_thinking(response.text)
        fence = _only_empty_fence(text) if "```" in text else None
        if fence is not None:
            shown = f"```{fence}" if fence else "```"
            return ParseFailure(
                f"the reply held an empty code block ({shown} with nothing inside): put your "
                f"JSON inside it; {EXPECTED_FORMAT}"
            )
        if text:
            return ParsedFinal(text, thinking)
        if thinking:
            return ParseFailure(f"the reply held only reasoning and no answer: {EXPECTED_FORMAT}")
        return ParseFailure(f"the reply was empty: {EXPECTED_FORMAT}")
