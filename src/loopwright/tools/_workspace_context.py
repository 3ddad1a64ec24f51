"""The workspace section of the system prompt (seed 003): root, git repository and branch,
and the files the request names that exist."""

from __future__ import annotations

import re
from pathlib import Path

from loopwright.errors import ToolError
from loopwright.tools._workspace import (
    display_path,
    read_regular,
    resolve_in_workspace,
    special_kind,
)

MAX_NAMED_FILES = 20
_PATH_TOKEN = re.compile(r"[\w./\\~-]{2,}")
_LINE_COUNT_LIMIT = 5_000_000


def git_repository(root: Path) -> tuple[str, str] | None:
    """(repository name, branch or 'detached at <sha>') when `root` is inside a git repo."""
    for folder in [root, *root.parents]:
        marker = folder / ".git"
        if marker.is_dir():
            git_dir = marker
        elif marker.is_file():
            try:
                text = read_regular(marker, ".git").decode("utf-8", "replace").strip()
            except ToolError:
                continue
            if not text.startswith("gitdir:"):
                continue
            git_dir = (folder / text.removeprefix("gitdir:").strip()).resolve()
        else:
            continue
        return folder.name, _branch(git_dir)
    return None


def _branch(git_dir: Path) -> str:
    try:
        head = read_regular(git_dir / "HEAD", "HEAD").decode("utf-8", "replace").strip()
    except (OSError, ToolError):
        return "unknown"
    if head.startswith("ref:"):
        return head.removeprefix("ref:").strip().removeprefix("refs/heads/")
    return f"detached at {head[:12]}"


def named_files(root: Path, request: str) -> list[str]:
    """Paths the request mentions that exist in the workspace, in order of mention."""
    found: list[str] = []
    for token in _PATH_TOKEN.findall(request):
        candidate = token.strip(".,;:!?'\"`()[]{}<>")
        if not candidate or candidate in found:
            continue
        try:
            path = resolve_in_workspace(root, candidate, must_exist=True)
        except ToolError:
            continue
        if path.is_dir() and "/" not in candidate:
            continue  # a bare word like "tests" names a folder only by accident
        if special_kind(path) is not None:
            continue  # a FIFO or device: reading it to count lines could block
        shown = display_path(path, root) + ("/" if path.is_dir() else "")
        if shown not in found and shown != "./":
            found.append(shown)
        if len(found) >= MAX_NAMED_FILES:
            break
    return found


def _describe(root: Path, shown: str) -> str:
    if shown.endswith("/"):
        return f"{shown} (folder)"
    file = root / shown
    size = file.stat().st_size
    if size > _LINE_COUNT_LIMIT:
        return f"{shown} ({size:,} bytes)"
    try:
        lines = read_regular(file, shown).count(b"\n")
    except ToolError:
        return shown
    return f"{shown} ({lines:,} lines)"


def workspace_context(root: str | Path, request: str) -> str:
    """The WORKSPACE section of the system prompt for a run on `request` in `root`."""
    root = Path(root).resolve()
    lines = ["WORKSPACE:", f"- Root: {root} (file tools take paths relative to it)"]
    repo = git_repository(root)
    if repo is not None:
        lines.append(f"- Git repository: {repo[0]} (branch: {repo[1]})")
    files = named_files(root, request)
    if files:
        lines.append("- Files named in the request:")
        lines.extend(f"  - {_describe(root, shown)}" for shown in files)
    return "\n".join(lines)
