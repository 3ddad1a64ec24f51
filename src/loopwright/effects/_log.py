"""EventLog: the one way a run's events go out.

A producer builds the event it means (`ToolCallEvent(call_id=..., ...)`: mypy checks its
fields) and leaves `run_id`, `seq` and `ts` to the log. `append` scrubs every text in it,
completes it: numbers it (`seq`, gap-free) and stamps its run and time, awaits the
`before_send` hook if one is set, and hands it to the recorder (the store's writer, which
makes it durable off the event loop) and to the in-process sink. No event reaches a store,
a screen or a subscriber unscrubbed. The event the producer built is the one that goes
out: it is built once (a copy only when the scrubber redacts something in it, or when it
was completed before).

A log may start with a recorded prefix (the events of an earlier process of the same run):
while the run re-makes those events they are checked against the recording instead of
going out again (`ReplayDivergence` if the code now does something else).

A log nobody reads (no sink, no recorder, no recording) stamps and sends nothing; the loops
also skip building the events of a step when `listening` is false, so a plain `agent.run()`
pays nothing for them.

A gate's id (`gate_id`) has a part keyed with a secret of the log's own, so nobody who knows
a run's id and its calls (public values) can name, and so decide, one of its gates; a
resumed run finds the ids its recording gave its gates.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from loopwright.clock import Clock, SystemClock
from loopwright.errors import ReplayDivergence
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    ModelResponseEvent,
    ToolCallStartedEvent,
)
from loopwright.run_context import EventSink, Recorder
from loopwright.safety.scrub import Scrubber

__all__ = ["EventLog", "EventSink", "Recorder", "describe", "send_event"]

E = TypeVar("E", bound=Event)


async def send_event(sink: EventSink, event: Event) -> None:
    """Give `event` to `sink`; what a coroutine function returns is awaited."""
    outcome = sink(event)
    if outcome is not None:
        await outcome


def describe(event: Event) -> str:
    """What an event did, as compared on replay (its effect, not its timing)."""
    if isinstance(event, ToolCallStartedEvent):
        return f"call {event.tool_name}({json.dumps(event.arguments, sort_keys=True)})"
    if isinstance(event, ModelResponseEvent):
        return f"model request {event.request_digest} at iteration {event.iteration_number}"
    return event.type


class EventLog:
    """One run's events: numbered, stamped, scrubbed, recorded, then sent."""

    def __init__(
        self,
        run_id: str,
        *,
        clock: Clock | None = None,
        scrubber: Scrubber | None = None,
        sink: EventSink | None = None,
        recorder: Recorder | None = None,
        recorded: Sequence[Event] = (),
        gate_key: bytes | None = None,
    ) -> None:
        self.run_id = run_id
        self.seq = 0
        self.scrubber = scrubber
        self.sink = sink
        self.recorder = recorder
        self.recorded = list(recorded)
        system = clock is None or type(clock) is SystemClock
        self._now: Callable[[], float] = time.time if system else clock.time  # type: ignore[union-attr]
        self.listening = sink is not None or recorder is not None or bool(self.recorded)
        """Someone reads the events. When nobody does, `append` builds nothing."""
        self.before_send: Callable[[Event], Awaitable[None]] | None = None
        """Awaited with each new event before it is recorded or sent: what must hold by the
        time anyone hears of the event (a task run's state file holds the step)."""
        self.gate_key = gate_key
        """The secret of this log's gate ids (None: a random one, made when first needed;
        empty: ids without a secret part, as a workflow recorded before they had one)."""

    def gate_id(self, base: str) -> str:
        """The id of the gate the run computes as `base` (from its run id and the call or
        step): the one the recording gave it, else `base` with a part keyed with this log's
        secret (a resumed run's new gates get its new process's)."""
        for event in self.recorded:
            if isinstance(event, ConfirmationRequiredEvent) and (
                event.request_id == base or event.request_id.startswith(base + "_")
            ):
                return event.request_id
        if self.gate_key is None:
            self.gate_key = os.urandom(16)
        if not self.gate_key:
            return base
        return f"{base}_{hmac.new(self.gate_key, base.encode(), hashlib.sha256).hexdigest()[:16]}"

    @property
    def replaying(self) -> bool:
        """The next event re-makes one that is already recorded."""
        return self.seq < len(self.recorded)

    async def append(self, draft: E, /) -> E | None:
        """Scrub, number, stamp and send one event; None when nobody listens.

        `draft` is the event as its producer built it, without `run_id`, `seq` and `ts`:
        the log completes it (`_complete`) and sends it, and returns it. A draft with a
        secret in it goes out as a scrubbed copy (the draft keeps its text); one that was
        completed before (it has a `seq`: appended already, or read from a log) as a new
        event with this log's stamps."""
        if not self.listening:
            return None
        event = draft
        if self.scrubber is not None:
            fields = _content(draft)
            scrubbed = self.scrubber.scrub_fields(fields)
            if scrubbed is not fields:
                event = dataclasses.replace(draft, **scrubbed)
        if event is draft and draft.seq:  # completed before: someone else's event now
            event = dataclasses.replace(draft)
        self.seq += 1
        _complete(event, self.run_id, self.seq, self._now())
        if self.seq <= len(self.recorded):
            self._check(event)
            return event
        if self.before_send is not None:
            try:
                await self.before_send(event)
            except BaseException:  # cancelled, or the hook failed: the seq is taken
                if self.recorder is not None:
                    self.recorder.write(event)  # so the log stays gap-free
                raise
        if self.recorder is not None:
            self.recorder.write(event)
        if self.sink is not None:
            await send_event(self.sink, event)
        return event

    def _check(self, event: Event) -> None:
        recorded = self.recorded[event.seq - 1]
        if recorded.type != event.type or describe(recorded) != describe(event):
            raise ReplayDivergence(event.seq, describe(recorded), describe(event))

    async def flush(self) -> None:
        """Return once every event appended so far is durable (a no-op with no recorder)."""
        if self.recorder is not None:
            await self.recorder.flush()


def _content(event: Event) -> dict[str, Any]:
    """An event's fields but the log's stamps, by name (what the scrubber searches). An
    event class's `__slots__` (slots=True) lists the fields it adds to BaseEvent's stamps:
    no field list is built per call."""
    return {name: getattr(event, name) for name in type(event).__slots__}


def _complete(event: Event, run_id: str, seq: int, ts: float) -> None:
    """Fill in the stamps a producer leaves to the log. Events are frozen: this is the one
    place that sets a field after the event was built, once, before anyone but its
    producer has seen it (as a frozen dataclass's own `__init__` does, through
    `object.__setattr__`)."""
    object.__setattr__(event, "run_id", run_id)
    object.__setattr__(event, "seq", seq)
    object.__setattr__(event, "ts", ts)
