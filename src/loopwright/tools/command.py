"""`run_command`: run a program in the workspace. Off by default (see `resolve_tools`).

The command is an argv list run without a shell, unless the model asks for
`shell=True`. It runs with stdin closed under a reaper (`tools._process`): on timeout,
when it ends, or when the run is cancelled, it and every process it started are killed,
also those that left its process group with `setsid`. Output (stdout and stderr
together) is capped while it is read, keeping the head and the tail, and endless output
(`yes`) cannot hold the timeout off.
"""

from __future__ import annotations

import shlex

from loopwright.errors import ToolError
from loopwright.tools._context import ToolContext
from loopwright.tools._process import run_process
from loopwright.tools._tool import tool
from loopwright.tools._workspace import resolve_in_workspace

MAX_COMMAND_TIMEOUT_S = 600.0


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
    done = await run_process(argv, cwd=folder, timeout_s=timeout_s)
    if done.code is None:
        raise ToolError(
            f"`{shown}` timed out after {timeout_s:g}s and was killed with everything it "
            f"started; output so far:\n{done.output}"
        )
    if done.code == 127 and done.output.startswith("command not found:"):
        raise ToolError(done.output.strip())
    if done.code == 126 and done.output.startswith("permission denied running"):
        raise ToolError(done.output.strip())
    return f"$ {shown}\n[exit code {done.code}]\n{done.output}"
