"""Side-effecting tools of the Temporal engine tests: each call appends one line to a file.

`append_line` is not idempotent (appending twice writes two lines); `put_line` is (it
writes its line only if the file does not have it yet). With
LOOPWRIGHT_TEST_HANG_AFTER=TEXT in the worker's environment, the call that writes TEXT
says so on stderr after its effect and hangs there (the test SIGKILLs that worker).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from loopwright import tool


@tool(effect="write", idempotent=False)
async def append_line(path: str, text: str) -> str:
    """Append one line of text to a file.

    Args:
        path: the file
        text: the line to append
    """
    with open(path, "a", encoding="utf-8") as file:
        file.write(text + "\n")
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
    if os.environ.get("LOOPWRIGHT_TEST_HANG_AFTER") == text:
        sys.stderr.write(f"hanging after {text}\n")
        sys.stderr.flush()
        await asyncio.Event().wait()
    return f"has {text!r}"
