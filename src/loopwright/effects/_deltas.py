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
from typing import cast

from loopwright.effects._log import EventLog, send_event
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


class _DeltaSender:
    """Sends one streamed reply's text to the log's sink as coalesced deltas, in order.

    Its text buffer is made on the first piece: a model that hands out none (a whole
    reply) costs this object only."""

    __slots__ = (
        "last", "listened", "log", "model_name", "monotonic", "now", "pending", "previous",
        "settings", "text",
    )  # fmt: skip

    def __init__(
        self,
        model_name: str,
        log: EventLog,
        settings: DeltaSettings,
        monotonic: Callable[[], float],
        now: Callable[[], float],
        listened: Callable[[], bool] | None,
    ) -> None:
        self.model_name = model_name
        self.log = log
        self.settings = settings
        self.monotonic = monotonic
        self.now = now
        self.listened = listened
        self.text: DeltaText | None = None
        self.last = monotonic()
        self.previous: asyncio.Future[None] | None = None
        self.pending = False

    def on_text(self, piece: str) -> None:
        """The model's `on_text`: keep the piece; look for a due delta once it yields."""
        if self.text is None:
            self.text = DeltaText(self.log)
        self.text.add(piece)
        if not self.pending:
            self.pending = True
            asyncio.get_running_loop().call_soon(self._send_due)

    def _send_due(self) -> None:  # once the model yields: a burst of pieces is one delta
        self.pending = False
        text = self.text
        assert text is not None
        waited = self.monotonic() - self.last
        if waited >= self.settings.interval_s or text.waiting >= self.settings.max_chars:
            delta = text.take(final=False)
            if delta:
                self.previous = asyncio.ensure_future(self._send(delta, self.previous))
            self.last = self.monotonic()

    async def _send(self, delta: str, before: asyncio.Future[None] | None) -> None:
        if before is not None:
            await before
        if delta and (self.listened is None or self.listened()):
            log = self.log
            event = ModelTextDeltaEvent(
                run_id=log.run_id, seq=log.seq, ts=self.now(), text=delta, model=self.model_name
            )
            assert log.sink is not None
            await send_event(log.sink, event)

    async def finish(self) -> None:
        """After the reply: what is left goes out, after every delta before it."""
        if self.text is not None and (self.previous is not None or self.text.waiting):
            await self._send(self.text.take(final=True), self.previous)

    def cancel(self) -> None:
        if self.previous is not None:
            self.previous.cancel()


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
    `listened()` says someone follows the run, when it is given).

    The model's call runs in this task; when it yields after handing out pieces, a delta
    that is due goes out from a task of its own, each after the one before it, and all of
    them before this returns. A model that hands out no pieces costs no task (no queue and
    no gathered tasks per call: the CLI pays for this on every step)."""
    assert issubclass(type(model), StreamsText) and log.sink is not None
    streaming = cast(StreamsText, model)  # checked by the assert above
    sender = _DeltaSender(model.name, log, settings, monotonic, now, listened)
    try:
        response = await streaming.complete_streaming(request, sender.on_text)
    except BaseException:
        sender.cancel()
        raise
    await sender.finish()
    return response
