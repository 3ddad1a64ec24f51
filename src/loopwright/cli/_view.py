"""Renders run events for people (rich) or machines (one JSON object per line)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from rich.console import Console
from rich.status import Status

from loopwright.cli._output import console as output_console
from loopwright.cli._output import silence
from loopwright.cli._view_lines import (
    HOOK_KINDS,
    RunSeen,
    as_json,
    asked,
    budget,
    decided,
    duration_text,
    finished,
    header,
    resumed_header,
    step_ended,
    step_started,
    stopped,
    task_ended,
)
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
    TaskStartEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
    VerificationEvent,
    WarningEvent,
    encode_event,
)
from loopwright.safety.terminal import markup as escape  # shows control characters

if TYPE_CHECKING:  # `runs show` and `runs list` load no model code
    from loopwright.models import ModelPhase

SPINNER_TEXT = {
    "loading": "Loading the model...",
    "waiting": "Waiting for the model...",
    "prompt": "Thinking... (evaluating the prompt)",
    "generating": "Thinking... (generating)",
}
"""The spinner's text in each phase of an embedded model's call."""


class JsonLinesView:
    """`--json`: one event per line, flushed as it happens. The lines made while the run
    works without waiting are kept here and go out in one write when the event loop turns:
    a write per line is a system call each when Python's stdout is unbuffered
    (PYTHONUNBUFFERED, common in containers)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self._pending: list[str] = []
        self.closed = False
        """Whoever read the lines went away (`| head`): the next `show` says so."""

    def show(self, event: Event, line: str | None = None) -> None:
        """Write the event's line: `line`, the one its store holds, when the follower has
        it (it is not encoded again), else `encode_event`'s."""
        if self.closed:
            raise BrokenPipeError("stdout was closed")
        pending = self._pending
        pending.append(encode_event(event) if line is None else line)
        if len(pending) > 1:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not in an event loop: nothing else to wait for
            self._flush()
            return
        loop.call_soon(self._flush)

    def _flush(self) -> None:
        """Write the lines kept (called by the event loop: a closed pipe is remembered, for
        the next `show` to raise, instead of a traceback from the loop)."""
        lines, self._pending = self._pending, []
        if self.closed:
            return
        try:
            if lines:
                self.out.write("\n".join(lines) + "\n")
            self.out.flush()
        except BrokenPipeError:
            self.closed = True
            silence(self.out)

    def close(self) -> None:
        self._flush()

    def resumed(self, recorded: Sequence[Event]) -> None:
        """A resumed run: its recorded events are in the store already (`runs show`)."""


class LiveView:
    """The live view of a run, agent or task: Thinking... / Calling tool... / Observing... /
    the steps and their gates / Final Answer; a sub-agent's run nested under its call.

    `asks`: a person answers each gate's question at this terminal (the prompt shows the
    question, so the view does not). `flags`: the options that reach this run's store and
    engine, for the commands it suggests (`--store ...`)."""

    def __init__(
        self, console: Console | None = None, *, asks: bool = False, flags: str = ""
    ) -> None:
        self.console = console or output_console()
        self.asks = asks
        self.flags = flags
        self._status: Status | None = None
        self._streaming = False
        """A reply's text is being written out as it arrives (token streaming)."""
        self._runs: dict[str, RunSeen] = {}
        """The runs shown (the run and its sub-agents' runs), by run id."""

    def _run(self, event: Event) -> RunSeen:
        run = self._runs.get(event.run_id)
        if run is None:
            run = self._runs[event.run_id] = RunSeen(event.run_id)
            if isinstance(event, RunStartedEvent):
                lead = self._runs.get(event.parent_run_id or "")
                run.depth = 0 if lead is None else lead.depth + 1
        return run

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

    def resumed(self, recorded: Sequence[Event]) -> None:
        """Before a resumed run's new events: learn its recorded ones (its tokens so far,
        its limits, its sub-agents) and say which run goes on, from where."""
        for event in recorded:
            self._learn(event, self._run(event))
        if recorded:
            self.console.print(resumed_header(self._run(recorded[0])))

    def show(self, event: Event, line: str | None = None) -> None:
        if isinstance(event, ModelTextDeltaEvent):
            self._delta(event)
            return
        self._stop_spinner()
        streamed = self._streaming
        if streamed:  # the reply is complete: end its line
            self._streaming = False
            self.console.print()
        run = self._run(event)
        self._learn(event, run)
        # a streamed reply was shown as it came: its thought is not shown again
        shown_already = streamed and isinstance(event, ModelResponseEvent)
        line = None if shown_already else self._line(event, run)
        if line and run.depth:  # a sub-agent's run, nested under the call that started it
            line = "\n".join(f"{'    ' * run.depth}[dim]│[/] {part}" for part in line.split("\n"))
        if line:
            self.console.print(line)
        if isinstance(event, IterationStartedEvent):
            self._spin("Thinking...")
        elif isinstance(event, ToolCallStartedEvent):
            self._spin(f"Calling {escape(event.tool_name)}...")

    def model_phase(self, phase: ModelPhase) -> None:
        """The embedded model's call entered a phase (models/_phase.py): the spinner says
        it; loading the model and waiting for it (another run is using it) are also
        written as a line, which a pipe shows too."""
        if self._streaming:
            return
        if phase.phase in ("loading", "waiting"):
            self._stop_spinner()
            self.console.print(f"  [dim]… {escape(phase.text)}[/]")
        self._spin(SPINNER_TEXT[phase.phase])

    def _delta(self, event: ModelTextDeltaEvent) -> None:
        """The reply as it is generated, dimmed, on its own line(s) under the iteration."""
        if not self._streaming:
            self._stop_spinner()
            self._streaming = True
            self.console.print("  ", end="")
        self.console.print(escape(event.text), end="", style="dim", soft_wrap=True)

    @staticmethod
    def _learn(event: Event, run: RunSeen) -> None:
        """What an event tells about its run (shown or not)."""
        run.events += 1
        if isinstance(event, RunStartedEvent):
            run.kind, run.request, run.model = event.kind, event.request, event.model
            run.tools, run.limits = list(event.tools), dict(event.options)
        elif isinstance(event, ModelResponseEvent):
            usage = event.response.get("usage") or {}
            run.tokens += int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
        elif isinstance(event, TaskStartEvent):
            run.total_steps = event.total_steps
        elif isinstance(event, StepStartEvent) and event.step_type == "gate":
            run.gate_steps.add(event.step)
        elif isinstance(event, FunctionResultEvent):
            run.tools_run += 1
            run.hook_tools_run += event.step.partition(":")[0] in HOOK_KINDS
            if not event.success and event.function != "undo" and run.failure_shown is None:
                run.failure_shown = (event.step, event.error or "")
        elif isinstance(event, GateDecisionEvent):
            run.decided.add(event.step)

    def _line(self, event: Event, run: RunSeen) -> str | None:
        if isinstance(event, RunStartedEvent):
            return header(event)
        if isinstance(event, IterationStartedEvent):
            return f"[cyan]Iteration {event.iteration_number}/{event.max_iterations}[/] [dim]{budget(run)} · Thinking...[/]"
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
            note = f" [dim]({duration_text(event.duration_ms)})[/]"
            return f"  [{colour}]← Observing:[/] {escape(event.result_summary)}{note}"
        if isinstance(event, OutputInvalidEvent):
            retry = " (asking again)" if event.will_retry else ""
            errors = escape("; ".join(event.errors))
            return f"  [yellow]! the answer does not match the output schema: {errors}{retry}[/]"
        if isinstance(event, ConfirmationRequiredEvent):
            return None if self.asks and not run.depth else asked(event)
        if isinstance(event, GateDecisionEvent):
            return decided(event)
        return self._other_line(event, run)

    def _other_line(self, event: Event, run: RunSeen) -> str | None:
        if isinstance(event, RunStoppedEvent):
            return stopped(event, run, self.flags)
        if isinstance(event, RunErrorEvent):
            return f"[red]✗ {escape(event.error_type)}: {escape(event.message)}[/]"
        if isinstance(event, WarningEvent):
            return f"[yellow]! {escape(event.message)}[/]"
        if isinstance(event, VerificationEvent):
            return f"[bold]Verification: {event.outcome}[/] passed {len(event.passed)}, failed {len(event.failed)}"
        if isinstance(event, StepStartEvent):
            return step_started(event, run)
        if isinstance(event, FunctionResultEvent):
            colour = "green" if event.success else "red"
            value = as_json(event.result) if event.success else str(event.error)
            return f"  [{colour}]{escape(event.function)} → {escape(value[:200])}[/]"
        if isinstance(event, StreamEvent):
            return f"  [italic]{escape(event.chunk)}[/]"
        if isinstance(event, StepCompleteEvent):
            return step_ended(event, run)
        if isinstance(event, TaskCompleteEvent):
            return task_ended(event, run, self.flags)
        if isinstance(event, RunFinishedEvent):
            return finished(event, run)
        return None
