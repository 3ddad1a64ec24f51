"""ToolExecutor: validate, run with a timeout, truncate, scrub; failures become observations."""

from __future__ import annotations

import json
import time
from typing import Any

from loopwright.errors import ModelRetry, ToolError, UnknownToolError
from loopwright.messages import ToolCall, ToolResult
from loopwright.prompts.errors import (
    FailureText,
    UnknownToolText,
    build_error_observation,
    unknown_tool_observation,
)
from loopwright.safety.scrub import Scrubber
from loopwright.tools._deadline import run_with_timeout
from loopwright.tools._registry import ToolRegistry
from loopwright.tools._tool import Tool, ToolContext

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_OUTPUT_CHARS = 20_000


def render_output(value: Any) -> str:
    """A tool's return value as the text the model reads: a string as it is, anything else
    as JSON (or its str() when it has none)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def truncate_output(text: str, limit: int) -> tuple[str, bool]:
    """Keep head and tail of an oversized output and say how much was cut."""
    if len(text) <= limit:
        return text, False
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    note = f"\n[... output truncated: {cut:,} of {len(text):,} characters omitted ...]\n"
    return text[:head] + note + text[-tail:], True


class ToolExecutor:
    """Runs tool calls. Never raises for a tool's failure: it returns an error observation."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        context: ToolContext[Any] | None = None,
        scrubber: Scrubber | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        failure_text: FailureText = build_error_observation,
        unknown_tool_text: UnknownToolText = unknown_tool_observation,
    ) -> None:
        self.registry = registry
        self.failure_text = failure_text
        """How a failed call reads to the model (an agent's prompt revision picks it)."""
        self.unknown_tool_text = unknown_tool_text
        """How a call to a tool that does not exist reads to the model (the same)."""
        self.context = context or ToolContext()
        self.scrubber = scrubber or Scrubber()
        self.timeout = timeout
        self.max_output_chars = max_output_chars
        self._failures: dict[str, int] = {}

    async def execute(self, call: ToolCall) -> ToolResult:
        started = time.perf_counter()
        try:
            tool = self.registry.get(call.name)
            problem = tool.check_arguments(call.arguments)
            if problem is not None:
                raise ToolError(f"{problem}. {tool.usage_hint}")
            context = self.context.for_call(call.id) if tool.takes_context else self.context
            invocation = tool.start(call.arguments, context)
            text = render_output(await run_with_timeout(invocation, tool.timeout or self.timeout))
            is_error = False
        except UnknownToolError as exc:
            text, is_error = self.unknown_tool_text(call.name, exc.known), True
        except (ToolError, ModelRetry) as exc:
            text, is_error = self._failure(call.name, str(exc)), True
        except TimeoutError:
            limit = self.timeout_for(self.registry.find(call.name))
            text, is_error = self._failure(call.name, f"timed out after {limit:g}s"), True
        except Exception as exc:
            text, is_error = self._failure(call.name, f"{type(exc).__name__}: {exc}"), True
        scrubbed = self.scrubber.scrub(text)  # before truncating: a cut must not split a secret
        content, truncated = truncate_output(scrubbed.text, self.max_output_chars)
        return ToolResult(
            call_id=call.id,
            tool_name=call.name,
            content=content,
            is_error=is_error,
            duration_ms=(time.perf_counter() - started) * 1000,
            truncated=truncated,
            redactions=scrubbed.redactions,
        )

    def timeout_for(self, tool: Tool | None) -> float:
        """The time limit of one call of `tool` (its own, else the executor's)."""
        return (tool.timeout if tool is not None else None) or self.timeout

    def _failure(self, tool_name: str, error: str) -> str:
        self._failures[tool_name] = self._failures.get(tool_name, 0) + 1
        return self.failure_text(tool_name, error, self._failures[tool_name])
