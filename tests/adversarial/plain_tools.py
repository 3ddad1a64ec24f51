"""Plain, undecorated functions loaded with `--tools file.py:fn` by the adversarial tests.

They declare nothing, so loopwright must treat their effect as unknown. `append_plain`
appends one line per call; with LOOPWRIGHT_TEST_HANG_AFTER=TEXT in the environment the call
that writes TEXT hangs after writing and says so on stderr (the test kills the process
there: the effect happened, its result was never recorded).
"""

from __future__ import annotations

import os
import sys
import threading


def append_plain(path: str, text: str) -> str:
    """Append one line of text to a file.

    Args:
        path: the file
        text: the line to append
    """
    with open(path, "a", encoding="utf-8") as file:
        file.write(text + "\n")
    if os.environ.get("LOOPWRIGHT_TEST_HANG_AFTER") == text:
        sys.stderr.write(f"hanging after {text}\n")  # stdout carries the --json events
        sys.stderr.flush()
        threading.Event().wait()
    return f"appended {text!r}"


def block_forever(seconds: int) -> str:
    """Block the calling thread (a sync tool that never returns in time).

    Args:
        seconds: how long to block
    """
    threading.Event().wait(seconds)
    return "woke up"


def thread_name() -> str:
    """The name of the thread this sync tool runs in."""
    return threading.current_thread().name
