"""Confinement of file tools to the workspace root."""

from __future__ import annotations

from pathlib import Path

from loopwright.errors import ToolError


def resolve_in_workspace(root: Path, path: str, *, must_exist: bool = False) -> Path:
    """The real path of `path` inside `root`.

    Refuses `..` escapes, absolute paths outside the root and symlinks that lead out.
    """
    root = root.resolve()
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve()
    if resolved != root and root not in resolved.parents:
        raise ToolError(f"path {path!r} is outside the workspace {root}")
    if must_exist and not resolved.exists():
        raise ToolError(f"no such file or folder in the workspace: {path!r}")
    return resolved


def resolve_readable(
    root: Path, readable_roots: list[Path], path: str, *, must_exist: bool = True
) -> Path:
    """Like `resolve_in_workspace`, but read-only tools may also read the extra roots.

    A relative path is looked up in the workspace first, then in each extra root.
    """
    try:
        found = resolve_in_workspace(root, path, must_exist=must_exist)
    except ToolError as refused:
        for extra in readable_roots:
            try:
                return resolve_in_workspace(extra, path, must_exist=must_exist)
            except ToolError:
                continue
        raise refused from None
    return found
