"""Read-only workspace tools that find things: `grep` (text in files) and `glob` (names).

Both skip `.git`, virtualenvs, caches and `node_modules`, FIFOs, sockets and devices,
never follow a symlink out of the workspace, and say when they stopped at their result
limit. `grep` matches in a child process (`_grep_worker.py`) killed at `GREP_TIMEOUT_S`:
a catastrophic pattern such as `(a+)+$` cannot hold the engine (Python's `re` backtracks
and cannot be interrupted in a thread; a linear-time engine such as RE2 would change the
pattern language the tool documents, so the tool keeps Python's syntax and bounds time).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from loopwright.errors import ToolError
from loopwright.tools._context import ToolContext
from loopwright.tools._tool import tool
from loopwright.tools._workspace import (
    SKIPPED_FOLDERS,
    display_path,
    resolve_readable,
    special_kind,
)

MAX_FILE_BYTES = 2_000_000
MAX_LINE_CHARS = 300
GREP_TIMEOUT_S = 10.0
"""How long one grep may match before its worker is killed."""
_WORKER = Path(__file__).with_name("_grep_worker.py")


def _is_regular(file: Path) -> bool:
    try:
        return stat.S_ISREG(file.stat().st_mode)
    except OSError:
        return False


def _files_under(base: Path, root: Path) -> Iterator[Path]:
    """Every regular file under `base` (sorted), skipping noise folders, escapes and
    FIFOs, sockets and devices."""
    if _is_regular(base):
        yield base
        return
    for folder, subfolders, files in os.walk(base):
        subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS)
        for name in sorted(files):
            file = Path(folder) / name
            if file.is_symlink():
                real = file.resolve()
                if not (real == root or root in real.parents):
                    continue
            if _is_regular(file):
                yield file


def search_files(
    files: list[Path], pattern: str, flags: int, max_matches: int, timeout_s: float
) -> tuple[list[tuple[int, int, str]], int]:
    """(file index, line number, text) of matching lines and how many more matched, found
    by a child process that is killed after `timeout_s` (a ToolError then)."""
    job = {
        "pattern": pattern,
        "flags": flags,
        "files": [str(f) for f in files],
        "max_matches": max_matches,
        "max_bytes": MAX_FILE_BYTES,
        "max_line": MAX_LINE_CHARS,
    }
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", str(_WORKER)],
            input=json.dumps(job).encode(),
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ToolError(
            f"grep stopped after {time.monotonic() - started:.1f}s (limit {timeout_s:g}s): the "
            f"pattern {pattern!r} is too slow on these files (nested repeats such as (a+)+ "
            "backtrack); simplify it or narrow path/include"
        ) from None
    if done.returncode != 0:
        last = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise ToolError(f"grep failed: {last[0]}")
    answer = json.loads(done.stdout)
    hits = [(int(i), int(n), str(text)) for i, n, text in answer["hits"]]
    return hits, int(answer["more"])


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
    files = [f for f in _files_under(base, root) if not include or fnmatch.fnmatch(f.name, include)]
    found, more = search_files(files, regex.pattern, regex.flags, max_matches, GREP_TIMEOUT_S)
    hits = [f"{display_path(files[i], root)}:{number}: {line}" for i, number, line in found]
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
        if special_kind(match) is not None:
            continue  # FIFOs, sockets and devices are not files the tools can use
        found.append(display_path(match, root) + ("/" if match.is_dir() else ""))
    if len(found) > max_results:
        extra = len(found) - max_results
        return [*found[:max_results], f"[{extra:,} more not shown; use a narrower pattern]"]
    return found
