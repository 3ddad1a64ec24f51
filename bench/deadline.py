"""Why `tools._deadline.run_with_timeout` is kept: its cost per tool call against plain
`asyncio.timeout`, measured in the same run, for a call that finishes without suspending
(most tool calls and every scripted model reply).

    python bench/deadline.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from loopwright.tools._deadline import run_with_timeout

CALLS = 50_000


async def _quick() -> int:
    return 1


async def _plain(awaitable: Awaitable[Any], seconds: float) -> Any:
    async with asyncio.timeout(seconds):
        return await awaitable


async def _per_call_us(wrap: Callable[[Awaitable[Any], float], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        await wrap(_quick(), 60.0)
    return (time.perf_counter() - started) / CALLS * 1e6


async def main() -> None:
    rounds: dict[str, list[float]] = {"run_with_timeout": [], "asyncio.timeout": []}
    for _ in range(5):
        rounds["run_with_timeout"].append(await _per_call_us(run_with_timeout))
        rounds["asyncio.timeout"].append(await _per_call_us(_plain))
    trampoline = statistics.median(rounds["run_with_timeout"])
    plain = statistics.median(rounds["asyncio.timeout"])
    print(f"run_with_timeout {trampoline:.2f} us/call, asyncio.timeout {plain:.2f} us/call "
          f"({plain / trampoline:.1f}x)")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
