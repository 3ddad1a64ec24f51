"""Side-effecting tools for the resume and crash tests: each call appends one line to a file.

`append_line` is declared non-idempotent (appending twice writes two lines), so an
interrupted call is never re-run. `put_line` is idempotent by construction (it writes its
line only if the file does not have it yet), so an interrupted call is simply re-run.

Both take a moment before and after their effect, so a kill can land on either side of it.
With LOOPWRIGHT_TEST_HANG_AFTER=TEXT in the environment, the call that writes TEXT hangs
after writing and says so on stderr (the test kills the process there: the effect is
done, its result never recorded).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from loopwright import tool


async def _after_effect(text: str) -> None:
    if os.environ.get("LOOPWRIGHT_TEST_HANG_AFTER") == text:
        sys.stderr.write(f"hanging after {text}\n")  # stdout carries the --json events
        sys.stderr.flush()
        await asyncio.Event().wait()
    await asyncio.sleep(0.002)


@tool(effect="write", idempotent=False)
async def append_line(path: str, text: str) -> str:
    """Append one line of text to a file.

    Args:
        path: the file
        text: the line to append
    """
    await asyncio.sleep(0.002)
    with open(path, "a", encoding="utf-8") as file:
        file.write(text + "\n")
    await _after_effect(text)
    return f"appended {text!r}"


@tool(effect="write", idempotent=True)
async def put_line(path: str, text: str) -> str:
    """Make sure a file has a line of text (written once, however often this is called).

    Args:
        path: the file
        text: the line
    """
    await asyncio.sleep(0.002)
    existing = Path(path).read_text("utf-8").splitlines() if os.path.exists(path) else []
    if text not in existing:
        with open(path, "a", encoding="utf-8") as file:
            file.write(text + "\n")
    await _after_effect(text)
    return f"has {text!r}"
