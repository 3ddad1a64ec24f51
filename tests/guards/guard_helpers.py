"""Helpers for the stop-policy tests: scripted replies and a model that moves a MockClock."""

from __future__ import annotations

import json
from typing import Any

from loopwright.clock import MockClock
from loopwright.messages import ModelRequest, ModelResponse
from loopwright.testing import ScriptedModel


def call(tool_name: str, /, **args: Any) -> str:
    """A prompted-mode reply that calls `tool_name` with `args`."""
    return json.dumps({"thought": f"use {tool_name}", "action": tool_name, "action_input": args})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


class SlowModel:
    """Wraps a ScriptedModel; every call moves the MockClock by `seconds` (no sleeping)."""

    def __init__(self, inner: ScriptedModel, clock: MockClock, seconds: float) -> None:
        self.inner = inner
        self.clock = clock
        self.seconds = seconds
        self.strict = inner.strict

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def preferred_tool_mode(self) -> Any:
        return self.inner.preferred_tool_mode

    @property
    def requests(self) -> list[ModelRequest]:
        return self.inner.requests

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.clock.advance(self.seconds)
        return await self.inner.complete(request)

    def assert_exhausted(self) -> None:
        self.inner.assert_exhausted()
