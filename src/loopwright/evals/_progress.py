"""Done/total, elapsed and an estimate of the time left, as one plain line (no I/O here)."""

from __future__ import annotations

import time
from collections.abc import Callable


def clock_text(seconds: float) -> str:
    """`0:07`, `12:40`, `1:02:03`."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressClock:
    """How far a job of `total` items is, and how long the rest should take at this pace."""

    def __init__(
        self, total: int, *, unit: str = "done", clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.total = total
        self.done = 0
        self.unit = unit
        self._clock = clock
        self.started = clock()

    @property
    def elapsed(self) -> float:
        return self._clock() - self.started

    @property
    def remaining(self) -> float | None:
        """Seconds left at the average pace so far (None before the first item is done)."""
        if not self.done:
            return None
        return self.elapsed / self.done * max(0, self.total - self.done)

    def advance(self, count: int = 1) -> None:
        self.done = min(self.total, self.done + count) if self.total else self.done + count

    def text(self) -> str:
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        left = self.remaining
        estimate = f", about {clock_text(left)} left" if left is not None and self.total else ""
        return (
            f"{self.done}/{self.total} {self.unit}{share}, elapsed {clock_text(self.elapsed)}"
            f"{estimate}"
        )
