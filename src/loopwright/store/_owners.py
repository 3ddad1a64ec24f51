"""Lease owners: `host:pid:random`, so a lease whose process is gone can be recognised.

A process on this host that no longer exists cannot renew its lease: its runs are
`interrupted` at once, without waiting for the lease to lapse. Owners on other hosts (or
whose process still exists) are trusted until their lease lapses.
"""

from __future__ import annotations

import os
import socket
import uuid


def new_owner_id() -> str:
    """`host:pid:random`, unique per process and keeper."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def owner_is_gone(owner: str) -> bool:
    """True only if `owner` names a process on this host that has certainly exited."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False
