"""Seed 001's `ReActJsonParser`, strict: a reply is the seed's JSON or it is a parse error.

It reads one JSON object, fenced (```json) or bare, with prose around it allowed:
`{"thought", "action", "action_input"}` is an action, `{"thought", "final_answer"}` the
final answer (`is_final` may accompany either). The ReAct text lines `Action:` with a JSON
`Action Input:`, and `Final Answer:`, read too. Anything else raises `ParseError`: broken
JSON (single quotes, a trailing comma, cut off) and plain text are not taken for an
answer. The executor tells the model what was wrong and asks once more.

The native parser chain (`loopwright.parsing`) is kinder on purpose: it repairs broken
JSON and takes plain text for the final answer (docs/parsing.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from loopwright.errors import ParseError
from loopwright.parsing._layers import split_thinking

_DECODER = json.JSONDecoder()
_ACTION = re.compile(r"^[ \t]*Action[ \t]*:[ \t]*(.+)$", re.M | re.I)
_ACTION_INPUT = re.compile(r"^[ \t]*Action[ \t]+Input[ \t]*:[ \t]*(.*)", re.M | re.I | re.S)
_FINAL = re.compile(r"^[ \t]*Final[ \t]+Answer[ \t]*:[ \t]*(.*)", re.M | re.I | re.S)
_THOUGHT = re.compile(r"^[ \t]*Thought[ \t]*:[ \t]*(.*?)$", re.M | re.I)
_OBSERVATION = re.compile(r"^\s*Observation\s*:", re.M | re.I)
FORMAT = (
    'reply with one JSON object: {"thought": "...", "action": "<tool name>", '
    '"action_input": {...}, "is_final": false} to call a tool, or {"thought": "...", '
    '"final_answer": "...", "is_final": true} to finish'
)

Reading = tuple[str, str, dict[str, Any] | str, str | None]
"""("action", tool, arguments, thought) or ("final", "", answer, thought)."""


def read_react_json(text: str) -> Reading:
    """The seed's reading of a reply; ParseError (naming the problem) when it has none."""
    body, thinking = split_thinking(text)
    if not body:
        raise ParseError(f"the reply was empty: {FORMAT}")
    found = next(_json_objects(body), None)
    lines = [m.start() for m in (_ACTION.search(body), _FINAL.search(body)) if m is not None]
    if lines and (found is None or min(lines) < found[0]):
        return _from_react_lines(body, thinking)
    if found is not None:
        return _from_object(found[1], thinking)
    if "{" in body:
        raise ParseError(f"the reply's JSON is not valid JSON (check quotes and commas): {FORMAT}")
    raise ParseError(f"the reply held no JSON object, only text: {FORMAT}")


def _json_objects(body: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(where, value) of each valid top-level JSON object in the text, in order (strict
    `json`, no repair)."""
    position = body.find("{")
    while position != -1:
        try:
            value, end = _DECODER.raw_decode(body, position)
        except json.JSONDecodeError:
            position = body.find("{", position + 1)
            continue
        if isinstance(value, dict):
            yield position, value
        position = body.find("{", end)


def _from_object(data: dict[str, Any], thinking: str | None) -> Reading:
    thought = data.get("thought") if isinstance(data.get("thought"), str) else thinking
    action = data.get("action")
    if isinstance(action, str) and action.strip():
        if action.strip().lower() in ("final answer", "final_answer", "finish"):
            return ("final", "", _text(data.get("action_input", "")), thought)
        return ("action", action.strip(), _arguments(data.get("action_input")), thought)
    if "final_answer" in data and data["final_answer"] is not None:
        return ("final", "", _text(data["final_answer"]), thought)
    keys = ", ".join(sorted(data)) or "none"
    problem = f'the JSON object has no "action" and no "final_answer" (keys: {keys})'
    raise ParseError(f"{problem}: {FORMAT}")


def _from_react_lines(body: str, thinking: str | None) -> Reading:
    cut = _OBSERVATION.search(body)
    body = body[: cut.start()] if cut else body
    thought_line = _THOUGHT.search(body)
    thought = thought_line.group(1).strip() if thought_line else thinking
    action = _ACTION.search(body)
    final = _FINAL.search(body)
    if final is not None and (action is None or final.start() < action.start()):
        return ("final", "", final.group(1).strip(), thought)
    assert action is not None
    given = _ACTION_INPUT.search(body, action.end())
    raw = given.group(1).strip().strip("`").removeprefix("json").strip() if given else ""
    if not raw:
        return ("action", action.group(1).strip(), {}, thought)
    try:
        value, _ = _DECODER.raw_decode(raw)
    except json.JSONDecodeError:
        raise ParseError(f"the Action Input is not valid JSON: {FORMAT}") from None
    if not isinstance(value, dict):
        raise ParseError(f"the Action Input is not a JSON object: {FORMAT}")
    return ("action", action.group(1).strip(), value, thought)


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    return {"input": value}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
