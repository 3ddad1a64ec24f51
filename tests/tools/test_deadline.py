"""run_with_timeout: asyncio.timeout semantics, with the timer armed only on suspension."""

from __future__ import annotations

import asyncio

import pytest

from loopwright.tools._deadline import run_with_timeout


async def immediate(value: int) -> int:
    return value


async def slow(seconds: float, value: int = 1) -> int:
    await asyncio.sleep(seconds)
    return value


async def failing() -> int:
    raise ValueError("boom")


async def test_a_call_that_never_suspends_returns_its_value() -> None:
    assert await run_with_timeout(immediate(3), 0.001) == 3
    assert await run_with_timeout(immediate(4), None) == 4


async def test_a_call_that_suspends_returns_within_the_limit() -> None:
    assert await run_with_timeout(slow(0.001, 7), 5.0) == 7


async def test_a_call_over_the_limit_raises_timeout_and_is_cancelled() -> None:
    cancelled = asyncio.Event()

    async def stuck() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(TimeoutError):
        await run_with_timeout(stuck(), 0.01)
    assert cancelled.is_set()


async def test_exceptions_pass_through_unchanged() -> None:
    with pytest.raises(ValueError, match="boom"):
        await run_with_timeout(failing(), 1.0)

    async def fails_later() -> int:
        await asyncio.sleep(0)
        raise KeyError("late")

    with pytest.raises(KeyError):
        await run_with_timeout(fails_later(), 1.0)


async def test_outside_cancellation_reaches_the_awaited_code() -> None:
    reached = asyncio.Event()

    async def waits() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            reached.set()
            raise

    task = asyncio.create_task(run_with_timeout(waits(), 60.0))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert reached.is_set()


async def test_many_suspensions_and_sent_values() -> None:
    async def steps() -> int:
        total = 0
        for i in range(5):
            await asyncio.sleep(0)
            total += i
        return total

    assert await run_with_timeout(steps(), 1.0) == 10
