"""Paths confined to a root folder (the workspace): the one check, used by the file tools
and by the safety layer's backups alike. Plain path logic over `errors`; no other import."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from loopwright.errors import ToolError

__all__: list[str] = []


def resolve_in_workspace(root: Path, path: str, *, must_exist: bool = False) -> Path:
    """The real path of `path` inside `root`.

    Refuses `..` escapes, absolute paths outside the root and symlinks that lead out
    (also dangling ones, and symlinked folders on the way).
    """
    root = root.resolve()
    if not isinstance(path, str) or not path.strip():
        raise ToolError("the path is empty: give a path relative to the workspace root")
    if "\x00" in path:
        raise ToolError(f"path {path!r} contains a NUL character")
    candidate = Path(path).expanduser() if path.startswith("~") else Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    lexical = Path(os.path.normpath(candidate))
    resolved = candidate.resolve()
    if not inside(lexical, root):
        raise ToolError(
            f"path {path!r} is outside the workspace {root} (use a path relative to it)"
        )
    if not inside(resolved, root):  # never say where the link points: that leaks
        raise ToolError(f"path {path!r} leads outside the workspace {root} through a symlink")
    if must_exist and not resolved.exists():
        raise ToolError(f"no such file or folder in the workspace: {path!r}")
    return resolved


def inside(path: Path, root: Path) -> bool:
    """`path` is `root` or under it (both resolved or both lexical)."""
    return path == root or root in path.parents


def special_kind(path: Path) -> str | None:
    """What a non-regular file is ("a FIFO", "a socket", "a device"), None for a regular
    file, a folder or nothing. Reading a FIFO or a device can block for good."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    return special_kind_of_mode(mode)


def special_kind_of_mode(mode: int) -> str | None:
    """`special_kind` for an `st_mode` already in hand (an open file's fstat)."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
