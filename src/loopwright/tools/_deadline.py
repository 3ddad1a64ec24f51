"""`run_with_timeout`: `asyncio.timeout` around an awaitable, armed only if it suspends.

Arming a timeout costs a timer in the event loop (created, pushed on the heap, cancelled)
for every call. Many tool calls and every scripted or cached model reply finish without
ever suspending, so the first step of the coroutine runs straight away and the timer is
armed only when it actually waits. Behaviour is the same as wrapping the whole await in
`asyncio.timeout(seconds)`: asyncio cannot interrupt code that does not suspend anyway,
and from the first suspension on the deadline applies exactly as before (measured from
that point, which is at most the length of one synchronous step later).

A step makes two such calls (the model's, the tool's); what this saves is measured in
docs/benchmarks.md ("What is kept for speed").
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Generator, Iterator
from typing import Any, TypeVar, cast

T = TypeVar("T")


class _Rest:
    """Awaits the remainder of an iterator whose first step has already run."""

    __slots__ = ("_pending", "_steps")

    def __init__(self, steps: Iterator[Any], pending: Any) -> None:
        self._steps = steps
        self._pending = pending

    def __await__(self) -> Generator[Any, Any, Any]:
        steps = cast(Generator[Any, Any, Any], self._steps)
        pending = self._pending
        while True:
            try:
                sent = yield pending
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as exc:  # cancellation and friends go to the awaited code
                try:
                    pending = steps.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    pending = steps.send(sent)
                except StopIteration as stop:
                    return stop.value


async def run_with_timeout(awaitable: Awaitable[T], seconds: float | None) -> T:
    """`await awaitable` within `seconds` (None: no limit); TimeoutError when over."""
    if seconds is None:
        return await awaitable
    steps = awaitable.__await__()
    try:
        pending = steps.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]  # (not cast(): a call, twice a step)
    async with asyncio.timeout(seconds):
        return await _Rest(steps, pending)  # type: ignore[no-any-return]
