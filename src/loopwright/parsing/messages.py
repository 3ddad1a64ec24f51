"""Read an assistant message in OpenAI, Ollama or Anthropic shape into a ModelResponse.

Returns a string saying what is wrong instead of raising, whatever the input. Tool-call
arguments sent as a JSON string that is cut off or malformed (`{"a": 2, "b": 3`, a reply
that hit the output limit) are repaired the way JSON in a reply's text is.
"""

from __future__ import annotations

import json
from typing import Any

from loopwright.messages import ModelResponse, ToolCall
from loopwright.parsing._extract import repair_arguments


def _arguments(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            return repair_arguments(raw)  # cut off or malformed: repaired like JSON in text
        return value if isinstance(value, dict) else None
    return None


def _content_blocks(blocks: list[Any]) -> tuple[list[str], list[ToolCall]] | str:
    """Anthropic content blocks: text and tool_use."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            args = _arguments(block.get("input"))
            name = block.get("name")
            if args is None or not isinstance(name, str) or not name:
                return f"tool_use block {index} needs a name and an object input"
            calls.append(ToolCall(str(block.get("id") or f"call_{index}"), name, args))
    return texts, calls


def _tool_calls(raw: Any) -> list[ToolCall] | str:
    """OpenAI/Ollama `tool_calls`: [{"id", "function": {"name", "arguments"}}]."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        return "tool_calls must be a list"
    calls: list[ToolCall] = []
    for index, item in enumerate(raw):
        function = item.get("function", item) if isinstance(item, dict) else None
        if not isinstance(function, dict):
            return f"tool call {index} is not an object"
        name = function.get("name")
        args = _arguments(function.get("arguments"))
        if not isinstance(name, str) or not name or args is None:
            return f"tool call {index} has no name or its arguments are not a JSON object"
        call_id = item.get("id") if isinstance(item, dict) else None
        calls.append(ToolCall(str(call_id or f"call_{index}"), name, args))
    return calls


def response_from_message(message: Any) -> ModelResponse | str:
    """A ModelResponse, or a string saying what is wrong with the message."""
    if not isinstance(message, dict):
        return "the message is not a JSON object"
    if isinstance(message.get("message"), dict):
        message = message["message"]  # Ollama /api/chat response envelope
    elif isinstance(message.get("choices"), list) and message["choices"]:
        choice = message["choices"][0]  # a whole OpenAI chat completion
        if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
            message = choice["message"]
    content = message.get("content")
    texts: list[str] = []
    calls: list[ToolCall] = []
    if isinstance(content, list):
        blocks = _content_blocks(content)
        if isinstance(blocks, str):
            return blocks
        texts, calls = blocks
    elif isinstance(content, str):
        texts = [content]
    elif content is not None:
        return "content must be text, a list of blocks, or null"
    listed = _tool_calls(message.get("tool_calls"))
    if isinstance(listed, str):
        return listed
    return ModelResponse(text="".join(texts), tool_calls=tuple([*calls, *listed]))
