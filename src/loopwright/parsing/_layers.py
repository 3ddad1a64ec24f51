"""The parser layers, tried in order: native tool calls, JSON in the text, tagged calls
(`<tool_call>`, Mistral `[TOOL_CALLS]`, Llama `<|python_tag|>`, pythonic `[f(x=1)]`),
`Thought:/Action:/Action Input:/Final Answer:` text, and finally plain text as the answer."""

from __future__ import annotations

import ast
import re
from typing import Any

from loopwright.messages import ModelResponse, ToolCall
from loopwright.parsing._extract import NOT_READ, decode, fenced_blocks, json_snippets
from loopwright.parsing._result import ParsedAction, ParsedFinal, ParseOutcome
from loopwright.parsing._shapes import outcome_from_value

_THINK = re.compile(r"<think(?:ing)?>(.*?)(?:</think(?:ing)?>|\Z)", re.S | re.I)
_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|(?=<tool_call>)|\Z)", re.S)
_CALL_PREFIX = re.compile(r"^\s*(\[TOOL_CALLS\]|<\|python_tag\|>)")
_FUNCTION_TAG = re.compile(r"<function=([\w.-]+)>\s*(.*?)\s*(?:</function>|\Z)", re.S)


def split_thinking(text: str) -> tuple[str, str | None]:
    """(text without <think> blocks, the thinking) — reasoning models put it first."""
    if "<" not in text:  # no tag at all: the common case, no regex needed
        return text.strip(), None
    thoughts = [m.group(1).strip() for m in _THINK.finditer(text)]
    rest = _THINK.sub("", text).strip()
    return rest, "\n".join(t for t in thoughts if t) or None


def _with_thought(outcome: ParseOutcome | None, thought: str | None) -> ParseOutcome | None:
    if thought is None or outcome is None or getattr(outcome, "thought", None):
        return outcome
    if isinstance(outcome, ParsedAction):
        return ParsedAction(outcome.calls, thought)
    if isinstance(outcome, ParsedFinal):
        return ParsedFinal(outcome.answer, thought)
    return outcome


class NativeToolCallParser:
    """Calls the provider returned in its tool-calling field (OpenAI, Ollama, Anthropic)."""

    name = "native"

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        if not response.tool_calls:
            return None
        text, thinking = split_thinking(response.text)
        return ParsedAction(response.tool_calls, text or thinking)


class TaggedCallParser:
    """`<tool_call>{...}</tool_call>` (several, unclosed), `<function=name>{...}</function>`."""

    name = "tagged"
    repair = True
    """Malformed JSON in a tag is repaired (False: read only valid JSON)."""

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        if "<" not in response.text:  # no tag: nothing for this layer (most replies)
            return None
        text, thinking = split_thinking(response.text)
        calls: list[ToolCall] = []
        for body in _TOOL_CALL_TAG.findall(text):
            outcome = outcome_from_value(decode(body.strip(), repair=self.repair))
            if isinstance(outcome, ParsedAction):
                calls.extend(outcome.calls)
            elif isinstance(outcome, ParsedFinal):
                return _with_thought(outcome, thinking)
        for name, body in _FUNCTION_TAG.findall(text):
            value = decode(body, repair=self.repair) if body.strip() else {}
            calls.append(
                ToolCall(f"call_{len(calls)}", name, value if isinstance(value, dict) else {})
            )
        if not calls:
            return None
        prose = re.split(r"<tool_call>|<function=", text, maxsplit=1)[0].strip()
        return ParsedAction(tuple(calls), thinking or prose or None)


class JsonInTextParser:
    """JSON in the content: fenced or bare, with prose around, repaired when malformed."""

    name = "json"
    repair = True
    """Malformed JSON is repaired (False: read only valid JSON)."""

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        if "{" not in response.text and "[" not in response.text:  # no object, no list
            return None
        text, thinking = split_thinking(response.text)
        text = _CALL_PREFIX.sub("", text)
        candidates = [
            (body, NOT_READ)
            for lang, body in fenced_blocks(text)
            if lang in ("", "json", "tool_call")
        ]
        for snippet, value in [*candidates, *json_snippets(text)]:
            if value is NOT_READ:
                value = decode(snippet.strip(), repair=self.repair)
            outcome = outcome_from_value(value)
            if outcome is not None:
                return _with_thought(outcome, thinking)
        return None


class PythonicCallParser:
    """Llama 3.2 / Gemma style calls: `[add(a=1, b=2)]` or a ```tool_code fence."""

    name = "pythonic"

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        if "(" not in response.text:  # no call
            return None
        text, thinking = split_thinking(response.text)
        blocks = [body for lang, body in fenced_blocks(text) if lang in ("tool_code", "python")]
        for source in [*blocks, text.strip()]:
            calls = _pythonic_calls(source.strip())
            if calls:
                return ParsedAction(calls, thinking)
        return None


def _pythonic_calls(source: str) -> tuple[ToolCall, ...]:
    if not re.fullmatch(r"\[?\s*[A-Za-z_][\w.]*\(.*\)\s*\]?", source, re.S) or len(source) > 10_000:
        return ()
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    nodes = tree.body.elts if isinstance(tree.body, ast.List) else [tree.body]
    calls: list[ToolCall] = []
    for index, node in enumerate(nodes):
        if not isinstance(node, ast.Call) or node.args:
            return ()
        name = ast.unparse(node.func)
        arguments = _literal_keywords(node.keywords)
        if arguments is None:
            return ()
        calls.append(ToolCall(f"call_{index}", name, arguments))
    return tuple(calls)


def _literal_keywords(keywords: list[ast.keyword]) -> dict[str, Any] | None:
    arguments: dict[str, Any] = {}
    for keyword in keywords:
        if keyword.arg is None:
            return None
        try:
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            return None
    return arguments
