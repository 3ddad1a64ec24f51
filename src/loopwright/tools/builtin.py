"""Built-in tools. File tools are confined to the run's workspace root."""

from __future__ import annotations

from loopwright.tools._tool import Tool, ToolContext, tool
from loopwright.tools._workspace import resolve_readable


@tool
def echo(text: str) -> str:
    """Repeat the given text back, unchanged.

    Args:
        text: the text to echo
    """
    return text


@tool
def read(
    ctx: ToolContext, path: str, start_line: int | None = None, end_line: int | None = None
) -> str:
    """Read a text file in the workspace, optionally only a range of lines (1-based, inclusive).

    Args:
        path: file path relative to the workspace root
        start_line: first line to return
        end_line: last line to return
    """
    file = resolve_readable(ctx.workspace, ctx.readable_roots, path)
    text = file.read_text(encoding="utf-8", errors="replace")
    if start_line is None and end_line is None:
        return text
    lines = text.splitlines(keepends=True)
    start = max(1, start_line or 1)
    end = min(len(lines), end_line or len(lines))
    return "".join(lines[start - 1 : end])


@tool
def list_files(ctx: ToolContext, path: str = ".") -> list[str]:
    """List the files and folders in a workspace folder (folders end with '/').

    Args:
        path: folder path relative to the workspace root
    """
    folder = resolve_readable(ctx.workspace, ctx.readable_roots, path)
    entries = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith(".git"):
            continue
        entries.append(child.name + ("/" if child.is_dir() else ""))
    return entries


BUILTIN_TOOLS: dict[str, Tool] = {t.name: t for t in (echo, read, list_files)}
