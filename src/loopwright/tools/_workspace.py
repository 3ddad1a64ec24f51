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
