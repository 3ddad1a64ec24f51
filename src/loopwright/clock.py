"""Clocks: the loop reads time only through one of these, so tests need not sleep."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def time(self) -> float:
        """Seconds since the epoch, for event timestamps."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin, for measuring durations and deadlines."""
        ...


class SystemClock:
    """The real clock (the default)."""

    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


class MockClock:
    """A clock that moves only when told to (`advance`)."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._mono = 0.0

    def time(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        self._now += seconds
        self._mono += seconds
