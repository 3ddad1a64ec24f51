"""Confinement of file tools to the workspace root, and small file helpers they share."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from loopwright.errors import ToolError
from loopwright.paths import resolve_in_workspace as resolve_in_workspace

SKIPPED_FOLDERS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
"""Folders that grep, glob and list_files do not descend into."""


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


def resolve_writable(root: Path, path: str) -> Path:
    """A path write tools may change: inside the workspace, not inside `.git`, not a folder."""
    target = resolve_in_workspace(root, path)
    relative = target.relative_to(root.resolve())
    if relative.parts and relative.parts[0] == ".git":
        raise ToolError(f"refusing to write inside .git: {path!r}")
    if target.is_dir():
        raise ToolError(f"{path!r} is a folder, not a file")
    return target


def display_path(file: Path, root: Path) -> str:
    """`file` relative to the workspace root when inside it, else absolute."""
    try:
        return file.relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        return str(file)


def sha256_of(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def read_bytes_or_none(file: Path) -> bytes | None:
    return file.read_bytes() if file.is_file() else None


def decode_text(data: bytes, path: str) -> str:
    """UTF-8 text of a file, or a ToolError saying it is binary or not UTF-8."""
    if b"\x00" in data[:8192]:
        raise ToolError(f"{path!r} is a binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{path!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def write_atomically(file: Path, data: bytes) -> None:
    """Replace `file` with `data` in one step (a crash leaves the old or the new file)."""
    file.parent.mkdir(parents=True, exist_ok=True)
    temp = file.with_name(f".{file.name}.loopwright-tmp")
    mode = file.stat().st_mode & 0o7777 if file.exists() else None
    temp.write_bytes(data)
    if mode is not None:
        os.chmod(temp, mode)
    os.replace(temp, file)
