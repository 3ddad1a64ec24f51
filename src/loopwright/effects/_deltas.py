"""Token streaming: a model call whose text goes out as it is generated.

`streamed_call` runs a `StreamsText` model's `complete_streaming` and, while it runs, sends
the pieces of text to the run's listener as `model_text_delta` events, coalesced: a delta
goes out when `interval_s` has passed since the last one, or `max_chars` are waiting, and
never while more pieces are already queued (a fast server's burst is one delta).

Deltas are scrubbed like every event, and a secret must not leak by being cut in two: the
whole text so far is scrubbed each time, and the last word (everything after the last
whitespace) and an unfinished `-----BEGIN ... -----END` block are held back until they are
complete. Should scrubbing ever change text already sent (a secret spanning words), no
more deltas are sent for that reply: the scrubbed `model_response` carries its text.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from loopwright.effects._log import EventLog
from loopwright.events import ModelTextDeltaEvent
from loopwright.messages import ModelRequest, ModelResponse
from loopwright.models import Model, StreamsText

INTERVAL_S = 0.05
MAX_CHARS = 256
_BLOCK_START, _BLOCK_END = "-----BEGIN", "-----END"


@dataclass(frozen=True)
class DeltaSettings:
    """How deltas are coalesced: at most one per `interval_s`, unless `max_chars` wait."""

    interval_s: float = INTERVAL_S
    max_chars: int = MAX_CHARS


DEFAULT_DELTAS = DeltaSettings()


def ready_length(text: str, final: bool) -> int:
    """How much of `text` may go out now: up to its last whitespace, not into an open block."""
    if final:
        return len(text)
    cut = max(text.rfind(" "), text.rfind("\n"), text.rfind("\t")) + 1
    block = text.rfind(_BLOCK_START, 0, cut)
    if block >= 0 and text.find(_BLOCK_END, block) < 0:
        cut = block
    return cut


class DeltaText:
    """A reply's text so far, and how much of it (scrubbed) was sent."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.raw: list[str] = []
        self.waiting = 0
        self.sent = ""
        self.stopped = False

    def add(self, piece: str) -> None:
        self.raw.append(piece)
        self.waiting += len(piece)

    def take(self, final: bool) -> str:
        """The next delta's text ("" when nothing is ready)."""
        if self.stopped or not self.waiting:
            return ""
        text = "".join(self.raw)
        self.raw = [text]
        ready = text[: ready_length(text, final)]
        scrubber = self.log.scrubber
        shown = scrubber.scrub(ready).text if scrubber is not None and ready else ready
        if not shown.startswith(self.sent):
            self.stopped = True  # scrubbing reached back into sent text: stop here
            return ""
        delta = shown[len(self.sent) :]
        self.sent = shown
        self.waiting = len(text) - len(ready)
        return delta


async def streamed_call(
    model: Model,
    request: ModelRequest,
    log: EventLog,
    settings: DeltaSettings,
    monotonic: Callable[[], float],
    now: Callable[[], float] = time.time,
    listened: Callable[[], bool] | None = None,
) -> ModelResponse:
    """`model.complete_streaming(request)`, its text sent to `log.sink` as deltas (while
    `listened()` says someone follows the run, when it is given)."""
    assert isinstance(model, StreamsText) and log.sink is not None
    sink = log.sink
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    async def produce() -> ModelResponse:
        try:
            return await model.complete_streaming(request, queue.put_nowait)
        finally:
            queue.put_nowait(None)

    async def send(text: str) -> None:
        if text and (listened is None or listened()):
            delta = ModelTextDeltaEvent(
                run_id=log.run_id, seq=log.seq, ts=now(), text=text, model=model.name
            )
            await sink(delta)

    async def consume() -> None:
        text = DeltaText(log)
        last = monotonic()
        while (piece := await queue.get()) is not None:
            text.add(piece)
            due = monotonic() - last >= settings.interval_s or text.waiting >= settings.max_chars
            if due and queue.empty():
                await send(text.take(final=False))
                last = monotonic()
        await send(text.take(final=True))

    response, _ = await asyncio.gather(produce(), consume())
    return response
