"""Read-only workspace tools that find things: `grep` (text in files) and `glob` (names).

Both skip `.git`, virtualenvs, caches and `node_modules`, never follow a symlink out of
the workspace, and say when they stopped at their result limit.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from loopwright.errors import ToolError
from loopwright.tools._context import ToolContext
from loopwright.tools._tool import tool
from loopwright.tools._workspace import SKIPPED_FOLDERS, display_path, resolve_readable

MAX_FILE_BYTES = 2_000_000
MAX_LINE_CHARS = 300


def _files_under(base: Path, root: Path) -> Iterator[Path]:
    """Every regular file under `base` (sorted), skipping noise folders and escapes."""
    if base.is_file():
        yield base
        return
    for folder, subfolders, files in os.walk(base):
        subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS)
        for name in sorted(files):
            file = Path(folder) / name
            if file.is_symlink():
                real = file.resolve()
                if not (real == root or root in real.parents) or not real.is_file():
                    continue
            yield file


def _matching_lines(file: Path, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    try:
        if file.stat().st_size > MAX_FILE_BYTES:
            return
        data = file.read_bytes()
    except OSError:
        return
    if b"\x00" in data[:8192]:
        return
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if regex.search(line):
            yield number, line.strip()[:MAX_LINE_CHARS]


@tool(effect="read")
def grep(
    ctx: ToolContext,
    pattern: str,
    path: str = ".",
    include: str | None = None,
    ignore_case: bool = False,
    max_matches: int = 100,
) -> str:
    """Search file contents in the workspace with a regular expression.

    Prints `path:line: text` for each matching line.

    Args:
        pattern: a Python regular expression, e.g. `def \\w+_test` or `TODO`
        path: a folder or file to search, relative to the workspace root
        include: only search files whose name matches this glob, e.g. `*.py`
        ignore_case: match upper and lower case alike
        max_matches: stop after this many matching lines
    """
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
    if max_matches < 1:
        raise ToolError("max_matches must be at least 1")
    base = resolve_readable(ctx.workspace, ctx.readable_roots, path)
    root = ctx.workspace.resolve()
    hits: list[str] = []
    more = 0
    for file in _files_under(base, root):
        if include and not fnmatch.fnmatch(file.name, include):
            continue
        for number, line in _matching_lines(file, regex):
            if len(hits) < max_matches:
                hits.append(f"{display_path(file, root)}:{number}: {line}")
            else:
                more += 1
    if not hits:
        return f"no matches for {pattern!r} in {path}"
    if more:
        hits.append(f"[{more:,} more matches not shown; narrow the pattern, path or include]")
    return "\n".join(hits)


def _check_pattern(pattern: str) -> None:
    if not pattern.strip():
        raise ToolError("the glob pattern is empty; e.g. `**/*.py`")
    pure = PurePosixPath(pattern)
    if pure.is_absolute() or ".." in pure.parts:
        raise ToolError(
            f"glob pattern {pattern!r} must be relative and stay inside the folder (no '..')"
        )


@tool(effect="read")
def glob(ctx: ToolContext, pattern: str, path: str = ".", max_results: int = 500) -> list[str]:
    """Find files and folders in the workspace by name pattern (folders end with '/').

    Args:
        pattern: a glob such as `*.md`, `src/**/*.py` or `**/test_*.py`
        path: the folder to search from, relative to the workspace root
        max_results: stop after this many paths
    """
    _check_pattern(pattern)
    base = resolve_readable(ctx.workspace, ctx.readable_roots, path)
    if not base.is_dir():
        raise ToolError(f"{path!r} is not a folder")
    root = ctx.workspace.resolve()
    found: list[str] = []
    for match in sorted(base.glob(pattern)):
        relative = match.relative_to(base).parts
        if any(part in SKIPPED_FOLDERS for part in relative):
            continue
        real = match.resolve()
        if not any(real == r or r in real.parents for r in [root, *ctx.readable_roots]):
            continue
        found.append(display_path(match, root) + ("/" if match.is_dir() else ""))
    if len(found) > max_results:
        extra = len(found) - max_results
        return [*found[:max_results], f"[{extra:,} more not shown; use a narrower pattern]"]
    return found
