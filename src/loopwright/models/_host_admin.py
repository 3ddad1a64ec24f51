"""What model hosts are running for this user, and stopping them (`loopwright model-host`).

A host's files without a living host (its lock free: the kernel released it when the host
died) are left by a killed host: they are removed when seen here, as a new host would.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from pathlib import Path
from typing import Any

from loopwright.models._host_files import (
    HostFiles,
    all_hosts,
    host_dir,
    is_held,
    read_json,
    remove,
)
from loopwright.models._host_wire import Channel, WireClosed

ASK_TIMEOUT_S = 5.0


def host_statuses(folder: Path | None = None) -> dict[str, Any]:
    """The user's model-host folder, each host there (what it serves, its calls, its
    memory) and who holds the model turn now."""
    folder = folder or host_dir()
    hosts = [_status(files) for files in all_hosts(folder)]
    turn = read_json(folder / "turn.json") if is_held(folder / "turn.lock") else {}
    return {"folder": str(folder), "hosts": [h for h in hosts if h], "turn": turn or None}


def _status(files: HostFiles) -> dict[str, Any]:
    info = read_json(files.info)
    if not is_held(files.lock):
        left = [p for p in (files.socket, files.info) if p.exists()]
        remove(files.socket, files.info)
        if not left:
            return {}
        return {"key": files.key, "state": "stale files removed", "pid": info.get("pid")}
    answer = _ask(files, "status")
    if answer is None:
        return {"key": files.key, "state": "not answering", "pid": info.get("pid"),
                "log": str(files.log), **info}  # fmt: skip
    answer.pop("op", None)
    busy = bool(answer.get("calls"))
    state = "loading" if not answer.get("loaded") else "busy" if busy else "idle"
    return {"key": files.key, "state": state, "log": str(files.log), **answer}


def _ask(files: HostFiles, op: str) -> dict[str, Any] | None:
    """The host's answer to `op` (status, stop), or None when it does not answer."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(ASK_TIMEOUT_S)
    channel = Channel(sock)
    try:
        sock.connect(str(files.socket))
        channel.send({"op": "hello", "protocol": 1, "pid": os.getpid(), "command": op})
        channel.receive()
        channel.send({"op": op})
        return channel.receive()
    except (OSError, WireClosed):
        return None
    finally:
        channel.close()


def stop_hosts(folder: Path | None = None, wait_s: float = 10.0) -> list[dict[str, Any]]:
    """Stop every model host of this user: asked first; if it is still there after
    `wait_s`, SIGTERM, then SIGKILL. What was done to each."""
    folder = folder or host_dir()
    done = []
    for files in all_hosts(folder):
        info = read_json(files.info)
        if not is_held(files.lock):
            remove(files.socket, files.info)
            continue
        pid = int(info.get("pid") or 0)
        how = "stopped" if _ask(files, "stop") is not None else "not answering"
        if not _gone(files, wait_s) and pid and _is_host(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
                os.kill(pid, signal.SIGCONT)  # a stopped process takes SIGTERM once it runs
            how = "terminated"
            if not _gone(files, wait_s):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                how = "killed"
                _gone(files, wait_s)
        remove(files.socket, files.info)
        done.append({"key": files.key, "pid": pid, "model": info.get("model"), "how": how})
    return done


def _gone(files: HostFiles, wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while is_held(files.lock):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _is_host(pid: int) -> bool:
    """Whether `pid` is a model host (a pid in a stale file may be another program's now)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"loopwright.models._host_server" in command
