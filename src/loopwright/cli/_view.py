"""Renders run events for people (rich) or machines (one JSON object per line)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.status import Status

from loopwright.cli._output import console as output_console
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    FunctionResultEvent,
    GateDecisionEvent,
    IterationStartedEvent,
    ModelResponseEvent,
    ModelTextDeltaEvent,
    OutputInvalidEvent,
    ParseErrorEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    RunStoppedEvent,
    StepCompleteEvent,
    StepStartEvent,
    StreamEvent,
    TaskCompleteEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
    VerificationEvent,
    WarningEvent,
    encode_event,
)
from loopwright.safety.terminal import markup as escape  # shows control characters


class JsonLinesView:
    """`--json`: one event per line, flushed as it happens. The lines made while the run
    works without waiting are kept here and go out in one write when the event loop turns:
    a write per line is a system call each when Python's stdout is unbuffered
    (PYTHONUNBUFFERED, common in containers)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self._pending: list[str] = []

    def show(self, event: Event) -> None:
        pending = self._pending
        pending.append(encode_event(event))
        if len(pending) > 1:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not in an event loop: nothing else to wait for
            self._flush()
            return
        loop.call_soon(self._flush)

    def _flush(self) -> None:
        if self._pending:
            lines, self._pending = self._pending, []
            self.out.write("\n".join(lines) + "\n")
        self.out.flush()

    def close(self) -> None:
        self._flush()


class LiveView:
    """The live view: Thinking... / Calling tool... / Observing... / Final Answer."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or output_console()
        self._status: Status | None = None
        self._tokens = 0
        self._limits: dict[str, Any] = {}
        self._streaming = False
        """A reply's text is being written out as it arrives (token streaming)."""
        self._depths: dict[str, int] = {}
        """Sub-agent runs shown nested under their parent's call: run id -> depth."""

    def _depth(self, event: Event) -> int:
        if isinstance(event, RunStartedEvent) and event.run_id not in self._depths:
            parent = self._depths.get(event.parent_run_id or "")
            self._depths[event.run_id] = 0 if parent is None else parent + 1
        return self._depths.get(event.run_id, 0)

    def _spin(self, text: str) -> None:
        self._stop_spinner()
        if self.console.is_terminal:
            self._status = self.console.status(text)
            self._status.start()

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def close(self) -> None:
        self._stop_spinner()
        if self._streaming:
            self._streaming = False
            self.console.print()

    def show(self, event: Event) -> None:
        if isinstance(event, ModelTextDeltaEvent):
            self._delta(event)
            return
        self._stop_spinner()
        if self._streaming:  # the reply is complete: end its line
            self._streaming = False
            self.console.print()
        depth = self._depth(event)
        line = self._line(event, depth)
        if line and depth:  # a sub-agent's run, nested under the call that started it
            line = "\n".join(f"{'    ' * depth}[dim]│[/] {part}" for part in line.split("\n"))
        if line:
            self.console.print(line)
        if isinstance(event, IterationStartedEvent):
            self._spin("Thinking...")
        elif isinstance(event, ToolCallStartedEvent):
            self._spin(f"Calling {escape(event.tool_name)}...")

    def _delta(self, event: ModelTextDeltaEvent) -> None:
        """The reply as it is generated, dimmed, on its own line(s) under the iteration."""
        if not self._streaming:
            self._stop_spinner()
            self._streaming = True
            self.console.print("  ", end="")
        self.console.print(escape(event.text), end="", style="dim", soft_wrap=True)

    def _budget(self) -> str:
        """Budget used so far, against the run's limits: `1,200/5,000 tokens · 30s limit`."""
        limit = self._limits.get("max_tokens_total")
        parts = [f"{self._tokens:,}/{limit:,} tokens" if limit else f"{self._tokens:,} tokens"]
        if self._limits.get("max_cost"):
            parts.append(f"max ${self._limits['max_cost']:g}")
        if self._limits.get("timeout_s"):
            parts.append(f"{self._limits['timeout_s']:g}s limit")
        return " · ".join(parts)

    def _line(self, event: Event, depth: int = 0) -> str | None:
        if isinstance(event, ModelResponseEvent):
            usage = event.response.get("usage") or {}
            self._tokens += int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
        if isinstance(event, RunStartedEvent):
            if depth == 0:
                self._limits = dict(event.options)
            tools = ", ".join(event.tools) or "none"
            return f"[bold]▶ {escape(event.request)}[/]\n  [dim]model {escape(event.model)} · tools {escape(tools)} · run {event.run_id}[/]"
        if isinstance(event, IterationStartedEvent):
            return f"[cyan]Iteration {event.iteration_number}/{event.max_iterations}[/] [dim]{self._budget()} · Thinking...[/]"
        if isinstance(event, ModelResponseEvent):
            return f"  [italic]{escape(event.thought)}[/]" if event.thought else None
        if isinstance(event, ParseErrorEvent):
            retry = " (asking again)" if event.will_retry else ""
            return f"  [yellow]! could not read the reply: {escape(event.message)}{retry}[/]"
        if isinstance(event, ToolCallStartedEvent):
            args = escape(json.dumps(event.arguments, ensure_ascii=False))
            return f"  [magenta]→ Calling {escape(event.tool_name)}[/] {args}"
        if isinstance(event, ToolCallEvent):
            colour = "red" if event.is_error else "green"
            note = f" [dim]({event.duration_ms:.0f} ms)[/]"
            return f"  [{colour}]← Observing:[/] {escape(event.result_summary)}{note}"
        if isinstance(event, OutputInvalidEvent):
            retry = " (asking again)" if event.will_retry else ""
            errors = escape("; ".join(event.errors))
            return f"  [yellow]! the answer does not match the output schema: {errors}{retry}[/]"
        if isinstance(event, RunStoppedEvent):
            return f"[yellow]■ Stopped ({event.reason}): {escape(event.message)}[/]"
        if isinstance(event, RunErrorEvent):
            return f"[red]✗ {escape(event.error_type)}: {escape(event.message)}[/]"
        if isinstance(event, WarningEvent):
            return f"[yellow]! {escape(event.message)}[/]"
        if isinstance(event, VerificationEvent):
            return f"[bold]Verification: {event.outcome}[/] passed {len(event.passed)}, failed {len(event.failed)}"
        if isinstance(event, StepStartEvent):
            return f"[cyan]Step {event.step_index + 1}: {escape(event.step)}[/] [dim]({event.step_type})[/]"
        if isinstance(event, FunctionResultEvent):
            colour = "green" if event.success else "red"
            return f"  [{colour}]{escape(event.function)} → {escape(str(event.result if event.success else event.error))[:200]}[/]"
        if isinstance(event, TaskCompleteEvent):
            return (
                f"[bold]Task {escape(event.task_name)}: {event.status}[/] {escape(event.summary)}"
            )
        if isinstance(event, RunFinishedEvent):
            return self._finished(event)
        return None

    def _finished(self, event: RunFinishedEvent) -> str:
        usage = event.usage
        tokens = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
        cost = f" · ${event.cost:.4f}" if event.cost else ""
        status = f"{event.status} ({event.reason})" if event.reason else event.status
        footer = f"[dim]{status} · {event.steps} tool calls · {tokens:,} tokens{cost}[/]"
        if event.answer is not None:
            return f"[bold green]✓ Final Answer:[/] {escape(event.answer)}\n{footer}"
        return footer


class TaskView:
    """LiveView plus the task-only events: gates, decisions, streamed text, skipped steps."""

    def __init__(self, json_lines: bool) -> None:
        self.base: JsonLinesView | LiveView = JsonLinesView() if json_lines else LiveView()
        self.console = None if json_lines else output_console()

    def show(self, event: Event) -> None:
        self.base.show(event)
        if self.console is None:
            return
        if isinstance(event, ConfirmationRequiredEvent):
            self.console.print(f"[bold yellow]? {escape(event.message)}[/]")
        elif isinstance(event, GateDecisionEvent):
            verdict = "approved" if event.approved else "rejected"
            self.console.print(f"  [dim]{verdict} by {escape(event.decided_by)}[/]")
        elif isinstance(event, StreamEvent):
            self.console.print(f"  [italic]{escape(event.chunk)}[/]")
        elif isinstance(event, StepCompleteEvent) and event.status != "completed":
            why = event.error or event.result or ""
            self.console.print(f"  [yellow]{event.status}[/] {escape(str(why))}")

    def close(self) -> None:
        self.base.close()
