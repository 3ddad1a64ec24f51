"""The machine-wide turn: one model computation at a time among the user's processes.

Two models computing at once on the same cores both go slower than one after the other
(their threads stall each other at llama.cpp's barriers), so every computation of the
embedded model, in a model host or in a process that runs it itself, takes the user's
turn lock (an flock, released by the kernel if its holder dies) and says who holds it.
A call waits for its turn at most LOOPWRIGHT_MODEL_WAIT seconds (default 600), then fails
with a model error naming the holder and how to stop it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from loopwright.errors import ConfigurationError, ModelError
from loopwright.models._host_files import (
    holder_text,
    host_dir,
    open_lock,
    read_json,
    this_command,
    try_lock,
    write_json,
)

WAIT_ENV = "LOOPWRIGHT_MODEL_WAIT"
DEFAULT_WAIT_S = 600.0
POLL_S = 0.05
STOP_HINT = (
    "`loopwright model-host status` shows what uses the model; "
    "`loopwright model-host stop` stops the model host"
)


def longest_wait() -> float:
    """LOOPWRIGHT_MODEL_WAIT: the seconds a call waits for its turn before it fails."""
    text = os.environ.get(WAIT_ENV, "").strip()
    if not text:
        return DEFAULT_WAIT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if seconds <= 0:
        raise ConfigurationError(f"{WAIT_ENV}: a number of seconds above 0, not {text!r}")
    return seconds


class Abandoned(Exception):
    """Whoever asked for the call is gone: it stops where it is."""


def _folder() -> Path | None:
    try:
        return host_dir()
    except (OSError, ConfigurationError):
        return None  # no shared folder: this process cannot take turns with others


@contextlib.contextmanager
def turn(
    on_wait: Callable[[str], None],
    should_stop: Callable[[], bool] = lambda: False,
    what: str = "",
) -> Iterator[float]:
    """Hold the user's model turn; yields the seconds waited for it. `on_wait` is told who
    holds it (once, if it has to wait); `should_stop` ends the wait (`Abandoned`)."""
    folder = _folder()
    if folder is None:
        yield 0.0
        return
    handle = open_lock(folder / "turn.lock")
    try:
        waited = _take(handle, folder, on_wait, should_stop)
        write_json(
            folder / "turn.json",
            {"pid": os.getpid(), "command": what or this_command(), "since": time.time()},
        )
        yield waited
    finally:
        handle.close()  # releases the flock


def _take(
    handle: IO[bytes],
    folder: Path,
    on_wait: Callable[[str], None],
    should_stop: Callable[[], bool],
) -> float:
    started = time.monotonic()
    if try_lock(handle):
        return 0.0
    limit = longest_wait()
    holder = read_json(folder / "turn.json")
    on_wait(holder_text(holder))
    while not try_lock(handle):
        if should_stop():
            raise Abandoned
        if time.monotonic() - started > limit:
            raise ModelError(
                f"waited {limit:.0f} s ({WAIT_ENV}) for the embedded model: "
                f"{holder_text(read_json(folder / 'turn.json'))} is using it; {STOP_HINT}",
                provider="local",
            )
        time.sleep(POLL_S)
    return time.monotonic() - started
