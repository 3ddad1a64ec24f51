"""Confinement of file tools to the workspace root, and small file helpers they share."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from pathlib import Path

from loopwright.errors import ToolError
from loopwright.paths import resolve_in_workspace as resolve_in_workspace
from loopwright.paths import special_kind as special_kind
from loopwright.paths import special_kind_of_mode

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


def refuse_special(path: Path, shown: str) -> None:
    """A ToolError when `path` is a FIFO, socket or device (file tools handle only files)."""
    kind = special_kind(path)
    if kind is not None:
        raise ToolError(f"{shown!r} is {kind}, not a regular file; file tools do not open it")


def in_git_folder(relative: Path) -> bool:
    """Inside any `.git` (the top one, a nested repository's or a submodule's gitlink)."""
    return any(part.lower() == ".git" for part in relative.parts)


def resolve_writable(root: Path, path: str) -> Path:
    """A path write tools may change: inside the workspace, not inside any `.git`, not a
    folder, not a FIFO, socket or device."""
    lexical = Path(os.path.normpath(path))
    target = resolve_in_workspace(root, path)
    relative = target.relative_to(root.resolve())
    if in_git_folder(relative) or in_git_folder(lexical):
        raise ToolError(f"refusing to write inside .git (any .git folder is protected): {path!r}")
    if target.is_dir():
        raise ToolError(f"{path!r} is a folder, not a file")
    refuse_special(target, path)
    return target


def display_path(file: Path, root: Path) -> str:
    """`file` relative to the workspace root when inside it, else absolute."""
    try:
        return file.relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        return str(file)


def sha256_of(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def read_regular(file: Path, shown: str) -> bytes:
    """The bytes of a regular file. Opened without blocking and checked after opening, so
    a FIFO or device swapped in after a check is refused, never waited on."""
    refuse_special(file, shown)
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise ToolError(f"cannot read {shown!r}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        kind = special_kind_of_mode(os.fstat(fd).st_mode)
        if kind is not None or stat.S_ISDIR(os.fstat(fd).st_mode):
            raise ToolError(f"{shown!r} is {kind or 'a folder'}, not a regular file")
        return handle.read()


def read_bytes_or_none(file: Path) -> bytes | None:
    """The file's bytes, None when there is no file (a FIFO or device is refused)."""
    if not os.path.lexists(file):
        return None
    return read_regular(file, file.name)


def decode_text(data: bytes, path: str) -> str:
    """UTF-8 text of a file, or a ToolError saying it is binary or not UTF-8."""
    if b"\x00" in data[:8192]:
        raise ToolError(f"{path!r} is a binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{path!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def write_atomically(file: Path, data: bytes) -> None:
    """Replace `file` with `data` in one step (a crash leaves the old or the new file).

    The temporary file has a random name in the target's folder and is created
    exclusively without following links (mkstemp: O_CREAT | O_EXCL | O_NOFOLLOW), so a
    link planted at a predictable name cannot send the content elsewhere.
    """
    file.parent.mkdir(parents=True, exist_ok=True)
    mode = file.stat().st_mode & 0o7777 if file.exists() else None
    fd, temp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".loopwright-tmp", dir=file.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            else:
                os.fchmod(handle.fileno(), 0o666 & ~_UMASK)  # as open() would
        os.replace(temp, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _read_umask() -> int:
    current = os.umask(0o022)  # read once at import: umask is process-wide, not per thread
    os.umask(current)
    return current


_UMASK = _read_umask()
