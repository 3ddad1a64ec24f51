"""Interpret a decoded JSON value as tool calls or a final answer, whatever its shape.

Shapes seen from real models: seed 000's {"thought","action","action_input","is_final"} and
{"final_answer"}; {"name","arguments"} (Qwen/Hermes, OpenAI-in-text); {"name","parameters"}
(Llama 3.x); {"tool","args"}, {"function":{"name","arguments"}}; {"tool_calls":[...]};
arrays of calls (Mistral). "Final" is decided from the action, not from `is_final` alone.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from loopwright.messages import ToolCall
from loopwright.parsing._result import ParsedAction, ParsedFinal, ParseOutcome

FINAL_ACTIONS = {"final answer", "final_answer", "finalanswer", "final", "answer", "finish"}
NAME_KEYS = ("action", "name", "tool", "tool_name", "function", "function_name", "recipient_name")
ARGUMENT_KEYS = ("action_input", "arguments", "parameters", "args", "input", "tool_input", "params")
FINAL_KEYS = ("final_answer", "finalAnswer", "answer", "response", "final")


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError:
            return {"input": raw}
        return decoded if isinstance(decoded, dict) else {"input": decoded}
    if raw is None:
        return {}
    return {"input": raw}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _thought(data: dict[str, Any]) -> str | None:
    for key in ("thought", "thoughts", "reasoning", "reason"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _call_name(data: dict[str, Any]) -> str | None:
    """The name of the call an object stands for (None: it names no call): its nested
    `function`'s name, else the first name key's that is not blank."""
    nested = data.get("function")
    if isinstance(nested, dict) and isinstance(nested.get("name"), str):
        return str(nested["name"])
    for name_key in NAME_KEYS:
        name = data.get(name_key)
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


def _call_from_object(data: dict[str, Any], index: int) -> ToolCall | None:
    name = _call_name(data)
    if name is None:
        return None
    nested = data.get("function")
    if isinstance(nested, dict) and isinstance(nested.get("name"), str):
        return ToolCall(f"call_{index}", name, _arguments(nested.get("arguments")))
    raw_args = next((data[k] for k in ARGUMENT_KEYS if k in data), None)
    return ToolCall(f"call_{index}", name, _arguments(raw_args))


def _final_key(data: dict[str, Any]) -> str | None:
    """The key holding an object's final answer (None: it has none)."""
    for key in FINAL_KEYS:
        if key in data and data[key] is not None and not isinstance(data[key], bool):
            return key
    return None


def _final_from_object(data: dict[str, Any]) -> str | None:
    key = _final_key(data)
    return None if key is None else _text(data[key])


def _is_final_action(name: str) -> bool:
    """Whether a call's name says it is the final answer (`Final Answer`, `final_answer`...)."""
    return name.strip().lower() in FINAL_ACTIONS


def _final_action_answer(call: ToolCall) -> str | None:
    """An "action" that is really the final answer (`Final Answer`, `final_answer`...)."""
    if not _is_final_action(call.name):
        return None
    args = call.arguments
    for key in ("input", "answer", "final_answer", "text", "response", "content"):
        if key in args:
            return _text(args[key])
    return _text(args) if args else ""


def outcome_from_object(data: dict[str, Any]) -> ParseOutcome | None:
    """The outcome one JSON object stands for, or None when it is not a call or an answer."""
    thought = _thought(data)
    calls = data.get("tool_calls")
    if isinstance(calls, list):
        return outcome_from_list(calls, thought)
    call = _call_from_object(data, 0)
    if call is not None:
        answer = _final_action_answer(call)
        if answer is not None:
            return ParsedFinal(answer, thought)
        return ParsedAction((call,), thought)
    answer = _final_from_object(data)
    if answer is not None:
        return ParsedFinal(answer, thought)
    return None


def outcome_from_list(items: list[Any], thought: str | None = None) -> ParseOutcome | None:
    calls: list[ToolCall] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            return None
        call = _call_from_object(item, index)
        if call is None:
            return None
        answer = _final_action_answer(call)
        if answer is not None:
            return (
                ParsedFinal(answer, thought) if not calls else ParsedAction(tuple(calls), thought)
            )
        calls.append(call)
    return ParsedAction(tuple(calls), thought) if calls else None


_NAMED_FINAL_KEYS = {"final_answer", "finalAnswer"}
_NAME_KEYS, _ARGUMENT_KEYS = set(NAME_KEYS), set(ARGUMENT_KEYS)
COMPLETING_KEYS = ("tool_calls", *sorted(_NAMED_FINAL_KEYS), *ARGUMENT_KEYS)
"""The keys of which an object needs one before it can say it all (`says_it_all`)."""


def says_it_all(data: dict[str, Any]) -> bool:
    """Whether an object read so far already stands for its whole outcome, so the keys
    that may follow change nothing the engine reads: a call with its name and arguments
    (a name key and an argument key, or `tool_calls`), or a named final answer. A key like
    `answer` or `response` does not count: a call may follow it. (A `final_answer` followed
    by a call, which no format asks for, is read as the answer.)"""
    keys = data.keys()
    if "tool_calls" in keys:
        complete = True
    elif keys & _NAMED_FINAL_KEYS:
        complete = not keys & _NAME_KEYS
    else:
        complete = bool(keys & _NAME_KEYS and keys & _ARGUMENT_KEYS)
    return complete and outcome_kind(data) is not None


def outcome_from_value(value: Any) -> ParseOutcome | None:
    if isinstance(value, dict):
        return outcome_from_object(value)
    if isinstance(value, list):
        return outcome_from_list(value)
    return None


def outcome_kind(value: Any) -> Literal["action", "final"] | None:
    """The kind of outcome `outcome_from_value(value)` reads (None: none), without building
    it: `ActionEnd` asks this of every JSON value that closes."""
    if isinstance(value, list):
        return _list_kind(value)
    if not isinstance(value, dict):
        return None
    calls = value.get("tool_calls")
    if isinstance(calls, list):
        return _list_kind(calls)
    name = _call_name(value)
    if name is not None:
        return "final" if _is_final_action(name) else "action"
    return None if _final_key(value) is None else "final"


def _list_kind(items: list[Any]) -> Literal["action", "final"] | None:
    """`outcome_kind` of a list of calls: a final answer at its head reads as the answer, one
    later ends the calls before it."""
    for index, item in enumerate(items):
        name = _call_name(item) if isinstance(item, dict) else None
        if name is None:
            return None
        if _is_final_action(name):
            return "action" if index else "final"
    return "action" if items else None
