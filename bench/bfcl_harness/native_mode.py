"""The baseline: the same question through the model's own format, on the same weights.

The model's chat template is given the question's functions as `tools=` (what llama.cpp's
server does with `--jinja`, and BFCL's Qwen FC handler), through llama-cpp-python's chat
handler on the very `Llama` instance loopwright's embedded model uses (same file, threads,
context), at temperature 0 with the embedded model's output limit. One reply is read two
ways: BFCL's strict reader (calls in `<tool_call>` tags, scored from the raw text by the
worker) and the lenient Hermes-style reader below, which takes any `{"name", "arguments"}`
object in the reply, tagged, fenced or bare, as llama.cpp's server does.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from loopwright.models import Model
from loopwright.models._local import DEFAULT_CONTEXT, LocalModel, _load

_DECODER = json.JSONDecoder()


@dataclass
class NativeReply:
    text: str
    calls: list[dict[str, Any]]
    """The calls the lenient reader finds."""
    seconds: float
    output_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "calls": self.calls,
            "seconds": round(self.seconds, 2),
            "output_tokens": self.output_tokens,
        }


def _as_call(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments = value.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    return {"name": value["name"], "arguments": arguments}


def lenient_calls(text: str) -> list[dict[str, Any]]:
    """Every `{"name": ..., "arguments": {...}}` object in `text` (or a list of them), in
    order, wherever it stands: in `<tool_call>` tags, a fenced block or bare."""
    calls: list[dict[str, Any]] = []
    index = 0
    while index < len(text):
        if text[index] not in "{[":
            index += 1
            continue
        try:
            value, end = _DECODER.raw_decode(text, index)
        except ValueError:
            index += 1
            continue
        found = [_as_call(v) for v in (value if isinstance(value, list) else [value])]
        if found and all(c is not None for c in found):
            calls.extend(c for c in found if c is not None)
            index = end
        else:
            index += 1
    return calls


def openai_tools(schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": s} for s in schemas]


class NativeChat:
    """The model's chat template with tools, on the embedded model's `Llama`."""

    def __init__(self, model: Model) -> None:
        if not isinstance(model, LocalModel):
            raise SystemExit("the native baseline runs on the embedded model (--model local...)")
        self.model = model
        self.context = getattr(model, "context", DEFAULT_CONTEXT)

    def _complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        llm, lock = _load(self.model.path, self.model.threads, self.context)
        with lock:
            return llm.create_chat_completion(
                messages=messages,
                tools=tools,
                temperature=0.0,
                max_tokens=self.model.max_output_tokens,
                seed=0,
            )

    async def reply(
        self, messages: list[dict[str, Any]], schemas: list[dict[str, Any]]
    ) -> NativeReply:
        started = time.perf_counter()
        response = await asyncio.to_thread(self._complete, messages, openai_tools(schemas))
        seconds = time.perf_counter() - started
        text = response["choices"][0]["message"].get("content") or ""
        usage = response.get("usage") or {}
        return NativeReply(
            text, lenient_calls(text), seconds, int(usage.get("completion_tokens", 0))
        )
