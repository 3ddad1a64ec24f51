"""The model host's queue: which waiting call runs next.

The model computes one call at a time (two at once on the same cores are each slower than
twice one). The next call is that of the client (a process) that used the model least
recently: its compute seconds decay with a half-life of `HALF_LIFE_S`, so a short run
started beside a long evaluation goes first, and two runs started together alternate.
When the client just served would still be first, the model waits up to `GRACE_S` for its
next call (its tool runs between two calls) rather than switching clients: a run finishes
in one stretch instead of losing its KV cache to the other client at every step.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HALF_LIFE_S = 60.0
GRACE_S = 1.0


@dataclass(eq=False)
class Pending:
    """A call waiting for (or getting) the model."""

    client: str
    """The calling process (its pid)."""
    command: str
    request: dict[str, Any]
    send: Callable[[dict[str, Any]], bool]
    is_gone: Callable[[], bool]
    order: int = 0
    since: float = field(default_factory=time.time)
    started: float = 0.0
    """When it got the model (time.time()); 0 while it waits."""
    phase: str = "waiting"
    detail: str = ""


class FairQueue:
    def __init__(self, grace_s: float = GRACE_S, half_life_s: float = HALF_LIFE_S) -> None:
        self.grace_s = grace_s
        self.half_life_s = half_life_s
        self.changed = threading.Condition()
        self.waiting: list[Pending] = []
        self.running: Pending | None = None
        self._used: dict[str, tuple[float, float]] = {}
        """client -> (compute seconds, when last updated): decayed on read."""
        self._last: tuple[str, float] | None = None
        """The client served last, and when its call ended."""
        self._numbers = itertools.count()
        self.stopping = False

    def used(self, client: str, now: float | None = None) -> float:
        seconds, at = self._used.get(client, (0.0, 0.0))
        now = time.monotonic() if now is None else now
        return seconds * 0.5 ** ((now - at) / self.half_life_s) if seconds else 0.0

    def submit(self, call: Pending) -> bool:
        """Queue `call`; False when the host is stopping (the call was not taken)."""
        with self.changed:
            if self.stopping:
                return False
            call.order = next(self._numbers)
            self.waiting.append(call)
            self.changed.notify_all()
            return True

    def take(self, timeout: float) -> Pending | None:
        """The next call to run (it becomes `running`), or None after `timeout` seconds
        with nothing to run, or when stopping."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not self.stopping:
                self.waiting = [c for c in self.waiting if not c.is_gone()]
                now = time.monotonic()
                best = self._best(now)
                if best is not None:
                    hold = self._hold_for_last(best, now)
                    if hold <= 0:
                        self.waiting.remove(best)
                        best.started = time.time()
                        self.running = best
                        return best
                    if now >= deadline:
                        return None  # held for the last client: nothing to run yet
                    self.changed.wait(min(hold, deadline - now))
                    continue
                if now >= deadline:
                    return None
                self.changed.wait(min(0.5, deadline - now))
            return None

    def _best(self, now: float) -> Pending | None:
        if not self.waiting:
            return None
        return min(self.waiting, key=lambda c: (self.used(c.client, now), c.order))

    def _hold_for_last(self, best: Pending, now: float) -> float:
        """Seconds to keep the model for the client served last (0: serve `best` now)."""
        if self._last is None:
            return 0.0
        client, ended = self._last
        if client == best.client or any(c.client == client for c in self.waiting):
            return 0.0
        if self.used(client, now) > self.used(best.client, now):
            return 0.0
        return ended + self.grace_s - now

    def done(self, call: Pending, seconds: float) -> None:
        with self.changed:
            now = time.monotonic()
            self._used[call.client] = (self.used(call.client, now) + seconds, now)
            self._last = (call.client, now)
            self.running = None
            self.changed.notify_all()

    def stop(self) -> list[Pending]:
        """Stop taking calls; the calls still waiting (to be told)."""
        with self.changed:
            self.stopping = True
            left, self.waiting = self.waiting, []
            self.changed.notify_all()
            return left

    def busy(self) -> bool:
        with self.changed:
            return self.running is not None or bool(self.waiting)

    def snapshot(self) -> list[Pending]:
        with self.changed:
            return ([self.running] if self.running else []) + list(self.waiting)
