"""Running a program with a time limit that holds: `run_process` (async) and
`run_process_sync`, shared by `run_command`, the `CommandVerifier` and the skill
preprocessor's `!command` lines.

The program runs under `_reaper.py` in a new session: at the limit (or on cancellation)
the reaper gets SIGTERM and kills every descendant, also those that called `setsid` or
double-forked out of the process group (on Linux it is their subreaper); then the whole
group gets SIGKILL in case the reaper itself is stuck. Output (stdout and stderr
together) is read as it comes, capped (head and tail), and the read loop yields to the
event loop between chunks, so endless output (`yes`) cannot starve the timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

HEAD_BYTES = 16_000
TAIL_BYTES = 16_000
_REAPER = str(Path(__file__).with_name("_reaper.py"))
_GRACE_S = 2.0
"""How long the reaper gets to clean up after SIGTERM before the group is SIGKILLed."""


class CappedOutput:
    """Keeps the first HEAD_BYTES and the last TAIL_BYTES of a stream, counts the rest."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail_size - len(self.tail[0]) >= TAIL_BYTES:
            self.tail_size -= len(first := self.tail.popleft())
            self.dropped += len(first)

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = b"".join(self.tail).decode("utf-8", errors="replace")
        if self.dropped:
            return f"{head}\n[... {self.dropped:,} bytes of output omitted ...]\n{tail}"
        return head + tail


@dataclass(frozen=True)
class ProcessOutcome:
    code: int | None
    """The exit code (128 + N for signal N); None when the time limit stopped it."""
    output: str
    elapsed_s: float

    @property
    def timed_out(self) -> bool:
        return self.code is None


def reaper_argv(command: list[str] | str) -> list[str]:
    """The argv that runs `command` (a list: no shell; a string: /bin/sh) under the reaper."""
    if isinstance(command, str):
        return [sys.executable, "-I", "-S", _REAPER, "--shell", command]
    return [sys.executable, "-I", "-S", _REAPER, "--", *command]


def _signal(pid: int, signum: int, *, group: bool) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        (os.killpg if group else os.kill)(pid, signum)


async def _read_all(process: asyncio.subprocess.Process, output: CappedOutput) -> int:
    assert process.stdout is not None
    while chunk := await process.stdout.read(65536):
        output.add(chunk)
        await asyncio.sleep(0)  # a read from a full buffer never suspends: let timers run
    return await process.wait()


async def _drain(process: asyncio.subprocess.Process, output: CappedOutput) -> None:
    """Read what is left (a full, paused pipe would keep the exit from being seen): what
    the program wrote before it was stopped is part of its output."""
    if process.stdout is not None:
        while chunk := await process.stdout.read(65536):
            output.add(chunk)


async def _stop(process: asyncio.subprocess.Process, output: CappedOutput) -> None:
    """SIGTERM the reaper (it kills every descendant), then SIGKILL the group."""
    _signal(process.pid, signal.SIGTERM, group=False)
    with contextlib.suppress(TimeoutError):
        drained = asyncio.gather(_drain(process, output), process.wait())
        await asyncio.wait_for(drained, _GRACE_S)
    _signal(process.pid, signal.SIGKILL, group=True)
    if process.returncode is None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), _GRACE_S)


async def run_process(
    command: list[str] | str,
    *,
    cwd: str | Path,
    timeout_s: float,
    env: dict[str, str] | None = None,
) -> ProcessOutcome:
    """Run `command` in `cwd`, stdin closed; stop it and all it started at `timeout_s`."""
    started = time.monotonic()
    output = CappedOutput()
    process = await asyncio.create_subprocess_exec(
        *reaper_argv(command),
        cwd=str(cwd),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    code: int | None = None
    try:
        code = await asyncio.wait_for(_read_all(process, output), timeout_s)
    except TimeoutError:
        pass
    finally:  # timed out or cancelled: nothing it started may outlive the call
        if code is None:
            await asyncio.shield(_stop(process, output))
    return ProcessOutcome(code, output.text(), time.monotonic() - started)


def run_process_sync(
    command: list[str] | str, *, cwd: str | Path, timeout_s: float
) -> ProcessOutcome:
    """`run_process` for synchronous callers (same reaper, same cap, same deadline)."""
    started = time.monotonic()
    deadline = started + timeout_s
    process = subprocess.Popen(
        reaper_argv(command),
        cwd=str(cwd),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    output = CappedOutput()
    code: int | None = None
    with process.stdout, selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while (remaining := deadline - time.monotonic()) > 0:
            if not selector.select(remaining):
                continue
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    code = process.wait(max(0.0, deadline - time.monotonic()))
                break
            output.add(chunk)
    if code is None:
        _signal(process.pid, signal.SIGTERM, group=False)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(_GRACE_S)
        _signal(process.pid, signal.SIGKILL, group=True)
        process.wait()
    return ProcessOutcome(code, output.text(), time.monotonic() - started)
