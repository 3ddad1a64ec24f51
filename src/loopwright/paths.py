"""Paths confined to a root folder (the workspace): the one check, used by the file tools
and by the safety layer's backups alike. Plain path logic over `errors`; no other import."""

from __future__ import annotations

import os
from pathlib import Path

from loopwright.errors import ToolError

__all__ = ["resolve_in_workspace"]


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
    if not inside(resolved, root):
        raise ToolError(
            f"path {path!r} leads outside the workspace {root} through a symlink "
            f"(it points to {resolved})"
        )
    if must_exist and not resolved.exists():
        raise ToolError(f"no such file or folder in the workspace: {path!r}")
    return resolved


def inside(path: Path, root: Path) -> bool:
    """`path` is `root` or under it (both resolved or both lexical)."""
    return path == root or root in path.parents
