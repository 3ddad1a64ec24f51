"""Read an assistant message in OpenAI, Ollama or Anthropic shape into a ModelResponse."""

from __future__ import annotations

import json
from typing import Any

from loopwright.messages import ModelResponse, ToolCall


def _arguments(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw or "{}")
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    return {} if raw is None else None


def response_from_message(message: Any) -> ModelResponse | str:
    """A ModelResponse, or a string saying what is wrong with the message."""
    if not isinstance(message, dict):
        return "the message is not a JSON object"
    if "message" in message and isinstance(message["message"], dict):
        message = message["message"]  # Ollama /api/chat response envelope
    content = message.get("content")
    calls: list[ToolCall] = []
    text_parts: list[str] = []
    if isinstance(content, list):  # Anthropic content blocks
        for index, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                text_parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_use":
                args = _arguments(block.get("input"))
                if args is None:
                    return f"tool_use block {index} has input that is not an object"
                calls.append(
                    ToolCall(str(block.get("id") or f"call_{index}"), str(block.get("name")), args)
                )
    elif isinstance(content, str):
        text_parts.append(content)
    for index, raw_call in enumerate(message.get("tool_calls") or []):
        function = raw_call.get("function", raw_call) if isinstance(raw_call, dict) else {}
        name = function.get("name")
        args = _arguments(function.get("arguments"))
        if not name or args is None:
            return f"tool call {index} has no name or its arguments are not a JSON object"
        call_id = raw_call.get("id") or f"call_{index}"
        calls.append(ToolCall(str(call_id), str(name), args))
    return ModelResponse(text="".join(text_parts), tool_calls=tuple(calls))
