"""Runs one command and, when it ends or is stopped, kills every process it started.

Started by `tools._process` as `python -I -S _reaper.py (--shell CMD | -- ARGV...)` in a
new session (the command shares its process group, so a kill of the group by the caller
still reaches the command if this process is gone). On Linux it makes itself a child
subreaper (prctl PR_SET_CHILD_SUBREAPER): a descendant that double-forks or calls
`setsid` to leave the process group is re-parented here instead of to init, so it stays
in this process's tree and is found by walking /proc. When the command exits, or this
process gets SIGTERM (the caller's timeout), every remaining descendant gets SIGKILL,
until none is left. Exit code: the command's,
128 + N when a signal N ended it. Standard library only (it runs isolated).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    if sys.platform != "linux":
        return
    # without it, the caller's process-group kill is the fallback
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _descendants(root: int) -> list[int]:
    """Every live process below `root`, from /proc (parent pid is field 4 of stat)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self").exists() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_all() -> None:
    """SIGKILL every descendant, reaping them, until none is left."""
    for _ in range(200):  # a process may fork between one scan and the next
        pids = _descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        time.sleep(0.001)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _stop(signum: int, frame: object) -> None:
    _kill_all()
    os._exit(128 + signum)


def main() -> int:
    # The handler comes first: a SIGTERM that arrives before it kills this process before
    # the command started, and one that arrives later finds every descendant by /proc.
    signal.signal(signal.SIGTERM, _stop)
    _become_subreaper()
    shell = sys.argv[1] == "--shell"
    command = sys.argv[2] if shell else sys.argv[2:]
    try:
        child = subprocess.Popen(command, shell=shell)  # in this process's group
    except FileNotFoundError:
        sys.stderr.write(f"command not found: {command[0] if not shell else command!r}\n")
        return 127
    except PermissionError:
        sys.stderr.write(f"permission denied running {command!r}\n")
        return 126
    code = child.wait()
    _kill_all()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
