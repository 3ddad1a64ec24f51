"""`run_command`: run a program in the workspace. Off by default (see `resolve_tools`).

The command is an argv list run without a shell, unless the model asks for
`shell=True`. It runs in its own process group with stdin closed; on timeout (or when
the run is cancelled) the whole group is killed. Output (stdout and stderr together)
is capped while it is read, keeping the head and the tail.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from collections import deque

from loopwright.errors import ToolError
from loopwright.tools._context import ToolContext
from loopwright.tools._tool import tool
from loopwright.tools._workspace import resolve_in_workspace

MAX_COMMAND_TIMEOUT_S = 600.0
HEAD_BYTES = 16_000
TAIL_BYTES = 16_000


class _CappedOutput:
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


def _argv(command: list[str] | str, shell: bool) -> list[str] | str:
    if shell:
        return command if isinstance(command, str) else shlex.join(command)
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ToolError(f"cannot split the command {command!r}: {exc}") from None
    else:
        argv = list(command)
    if not argv or not argv[0]:
        raise ToolError("the command is empty: give the program and its arguments")
    return argv


async def _start(argv: list[str] | str, cwd: str) -> asyncio.subprocess.Process:
    options = {
        "cwd": cwd,
        "stdin": asyncio.subprocess.DEVNULL,
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.STDOUT,
        "start_new_session": True,
    }
    try:
        if isinstance(argv, str):
            return await asyncio.create_subprocess_shell(argv, **options)  # type: ignore[arg-type]
        return await asyncio.create_subprocess_exec(*argv, **options)  # type: ignore[arg-type]
    except FileNotFoundError:
        name = argv if isinstance(argv, str) else argv[0]
        raise ToolError(f"command not found: {name!r}") from None
    except PermissionError:
        raise ToolError(f"permission denied running {argv!r}") from None


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """Kill the program and anything it left running in its process group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _collect(process: asyncio.subprocess.Process, output: _CappedOutput) -> int:
    assert process.stdout is not None
    while chunk := await process.stdout.read(65536):
        output.add(chunk)
    return await process.wait()


@tool(effect="destructive", idempotent=False, timeout=MAX_COMMAND_TIMEOUT_S + 5)
async def run_command(
    ctx: ToolContext,
    command: list[str] | str,
    cwd: str = ".",
    timeout_s: float = 60.0,
    shell: bool = False,
) -> str:
    """Run a program in the workspace and return its exit code and output.

    Args:
        command: the program and its arguments, e.g. ["pytest", "-q"] (a string is split
            like a shell would, but no shell runs unless `shell` is true)
        cwd: folder to run in, relative to the workspace root
        timeout_s: kill the program after this many seconds (at most 600)
        shell: run the command through /bin/sh (pipes, redirections, globbing)
    """
    if not 0 < timeout_s <= MAX_COMMAND_TIMEOUT_S:
        raise ToolError(f"timeout_s must be between 0 and {MAX_COMMAND_TIMEOUT_S:g} seconds")
    folder = resolve_in_workspace(ctx.workspace, cwd, must_exist=True)
    if not folder.is_dir():
        raise ToolError(f"cwd {cwd!r} is not a folder")
    argv = _argv(command, shell)
    shown = argv if isinstance(argv, str) else shlex.join(argv)
    output = _CappedOutput()
    process = await _start(argv, str(folder))
    try:
        code = await asyncio.wait_for(_collect(process, output), timeout_s)
    except TimeoutError:
        _kill_group(process)
        await process.wait()
        partial = output.text()
        raise ToolError(
            f"`{shown}` timed out after {timeout_s:g}s and was killed; output so far:\n{partial}"
        ) from None
    finally:
        _kill_group(process)
    return f"$ {shown}\n[exit code {code}]\n{output.text()}"
