"""A run's trace on Python `logging`: "Thinking... Calling echo... Observing... Final
Answer" (seed 001's manual check), one INFO record per step, on the `loopwright.trace`
logger (a child of `loopwright`).

The loop never logs or prints: `EventLogger` is an event sink, like the CLI's live view.
Pass it as `on_event=` (or call it from your own sink); seed 001's compat `AgentExecutor`
adds it to each run by itself when the logger is enabled for INFO. Events reach it
scrubbed (the run's log scrubs them); control characters are shown as escapes, so a
model's text cannot act on the terminal a handler writes to.
"""

from __future__ import annotations

import json
import logging

from loopwright.events import (
    Event,
    IterationStartedEvent,
    ModelResponseEvent,
    ParseErrorEvent,
    RunErrorEvent,
    RunStoppedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
    WarningEvent,
)

TRACE_LOGGER = "loopwright.trace"
SHOWN_CHARS = 200


def visible(text: str) -> str:
    """Control characters as escapes (safety.terminal, imported once a run is traced: it
    brings `rich`, which a plain `import loopwright` does not load)."""
    from loopwright.safety.terminal import visible as shown

    return shown(text)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return visible(flat if len(flat) <= SHOWN_CHARS else flat[: SHOWN_CHARS - 1] + "…")


def trace_line(event: Event) -> str | None:
    """The trace line of one event (None: an event the trace does not show)."""
    if isinstance(event, IterationStartedEvent):
        return f"Thinking... (iteration {event.iteration_number}/{event.max_iterations})"
    if isinstance(event, ToolCallStartedEvent):
        arguments = json.dumps(event.arguments, ensure_ascii=False, sort_keys=True, default=str)
        return f"Calling {visible(event.tool_name)}({_short(arguments)})..."
    if isinstance(event, ToolCallEvent):
        failed = " (error)" if event.is_error else ""
        return f"Observing {visible(event.tool_name)}{failed}: {_short(event.result_summary)}"
    if isinstance(event, ModelResponseEvent) and event.final_answer is not None:
        return f"Final Answer: {_short(event.final_answer)}"
    if isinstance(event, ParseErrorEvent):
        then = "asking again" if event.will_retry else "giving up"
        return f"Unreadable reply ({_short(event.message)}): {then}"
    if isinstance(event, WarningEvent):
        return f"Warning: {_short(event.message)}"
    if isinstance(event, RunStoppedEvent):
        return f"Stopped ({event.reason}): {_short(event.message)}"
    if isinstance(event, RunErrorEvent):
        return f"Failed: {visible(event.error_type)}: {_short(event.message)}"
    return None


class EventLogger:
    """An event sink that writes the run's trace on a logger, at INFO."""

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.logger = logger or logging.getLogger(TRACE_LOGGER)

    @property
    def enabled(self) -> bool:
        """Would a record be written? (Checked before a run: a run nobody reads builds no
        events at all.)"""
        return self.logger.isEnabledFor(logging.INFO)

    def __call__(self, event: Event) -> None:
        line = trace_line(event)
        if line is not None:
            self.logger.info(line, extra={"run_id": event.run_id, "seq": event.seq})
