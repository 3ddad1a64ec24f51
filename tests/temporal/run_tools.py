"""Side-effecting tools of the Temporal engine tests: each call appends one line to a file.

`append_line` is not idempotent (appending twice writes two lines); `put_line` is (it
writes its line only if the file does not have it yet). With
LOOPWRIGHT_TEST_HANG_AFTER=TEXT in the worker's environment, the call that writes TEXT
says so on stderr after its effect and hangs there (the test SIGKILLs that worker).

With LOOPWRIGHT_TEST_KILL_ONCE=1 (the kill trials), a call whose text holds KILL_MARK
hangs after its effect on its first attempt only: it creates PATH.hung (holding its
worker's pid: the signal the test waits for) and hangs; an attempt that finds the file
goes on. With LOOPWRIGHT_TEST_KILL_ONCE=after-commit it does the same but, instead of
hanging, waits for PATH.go and returns (its result is then committed; the test holds the
worker's report to Temporal and kills it). Each call of either tool also adds its text to
PATH.attempts (counted by tests).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from loopwright import tool

KILL_MARK = "[kill]"


async def _after_effect(path: str, text: str) -> None:
    """Count the attempt; hang where the test asked (it SIGKILLs the worker there)."""
    with open(f"{path}.attempts", "a", encoding="utf-8") as file:
        file.write(text + "\n")
    mode = os.environ.get("LOOPWRIGHT_TEST_KILL_ONCE")
    if mode is None or KILL_MARK not in text:
        return
    try:
        with open(f"{path}.hung", "x", encoding="utf-8") as file:
            file.write(str(os.getpid()))
    except FileExistsError:
        return  # a later attempt, on another worker
    if mode != "after-commit":
        await asyncio.Event().wait()
    while not os.path.exists(f"{path}.go"):
        await asyncio.sleep(0.05)


@tool(effect="write", idempotent=False)
async def append_line(path: str, text: str) -> str:
    """Append one line of text to a file.

    Args:
        path: the file
        text: the line to append
    """
    with open(path, "a", encoding="utf-8") as file:
        file.write(text + "\n")
    await _after_effect(path, text)
    if os.environ.get("LOOPWRIGHT_TEST_HANG_AFTER") == text:
        sys.stderr.write(f"hanging after {text}\n")
        sys.stderr.flush()
        await asyncio.Event().wait()
    return f"appended {text!r}"


@tool(effect="read")
async def wait(seconds: float) -> str:
    """Wait, then say so (a long call to cancel).

    Args:
        seconds: how long
    """
    sys.stderr.write("waiting\n")
    sys.stderr.flush()
    await asyncio.sleep(seconds)
    return f"waited {seconds:g}s"


@tool(effect="read")
def big(size: int) -> str:
    """Return a long text.

    Args:
        size: its length in characters
    """
    line = "0123456789abcdefghijklmnopqrstuvwxyz\n"
    return (line * (size // len(line) + 1))[:size]


@tool(effect="write", idempotent=True)
async def put_line(path: str, text: str) -> str:
    """Make sure a file has a line of text (written once, however often this is called).

    Args:
        path: the file
        text: the line
    """
    existing = Path(path).read_text("utf-8").splitlines() if os.path.exists(path) else []
    if text not in existing:
        with open(path, "a", encoding="utf-8") as file:
            file.write(text + "\n")
    await _after_effect(path, text)
    if os.environ.get("LOOPWRIGHT_TEST_HANG_AFTER") == text:
        sys.stderr.write(f"hanging after {text}\n")
        sys.stderr.flush()
        await asyncio.Event().wait()
    return f"has {text!r}"


@tool(effect="read")
async def hold(path: str) -> str:
    """Wait until a file exists, then say so (a call that lasts until the test says).

    Args:
        path: the file to wait for
    """
    held = Path(f"{path}.held.tmp")  # written whole, then renamed: never read half-written
    held.write_text(str(os.getpid()), encoding="utf-8")
    held.replace(f"{path}.held")  # the test's signal
    while not os.path.exists(path):
        await asyncio.sleep(0.05)
    return f"released by {Path(path).name}"
