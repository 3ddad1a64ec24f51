"""Built-in tools. File tools are confined to the run's workspace root.

`BUILTIN_TOOLS` are the tools `--tools` enables by name. `OPT_IN_TOOLS` (`run_command`)
need an explicit opt-in as well (`--allow-commands`, `resolve_tools(allow_commands=True)`).
"""

from __future__ import annotations

from loopwright.errors import ToolError
from loopwright.tools._context import ToolContext
from loopwright.tools._tool import Tool, tool
from loopwright.tools._workspace import decode_text, read_regular, resolve_readable, special_kind
from loopwright.tools.command import run_command
from loopwright.tools.files import edit_file, write_file
from loopwright.tools.search import glob, grep


@tool(effect="read")
async def echo(text: str) -> str:
    """Repeat the given text back, unchanged.

    Args:
        text: the text to echo
    """
    return text


@tool(effect="read", aliases={"file_path": "path"})
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
    if file.is_dir():
        raise ToolError(f"{path!r} is a folder; use list_files to see what is in it")
    text = decode_text(read_regular(file, path), path)
    if start_line is None and end_line is None:
        return text
    lines = text.splitlines(keepends=True)
    start = start_line or 1
    end = len(lines) if end_line is None else end_line
    if start > len(lines):
        raise ToolError(f"{path!r} has {len(lines)} lines; start_line {start} is past the end")
    if start < 1 or end < start:
        raise ToolError(f"invalid line range {start}-{end}: lines are numbered from 1")
    return "".join(lines[start - 1 : min(end, len(lines))])


@tool(effect="read", aliases={"directory": "path", "dir_path": "path"})
def list_files(ctx: ToolContext, path: str = ".") -> list[str]:
    """List the files and folders in a workspace folder (folders end with '/').

    Args:
        path: folder path relative to the workspace root
    """
    folder = resolve_readable(ctx.workspace, ctx.readable_roots, path)
    if not folder.is_dir():
        raise ToolError(f"{path!r} is a file, not a folder; use read to see its content")
    entries = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith(".git") or special_kind(child) is not None:
            continue  # FIFOs, sockets and devices are not files the tools can use
        entries.append(child.name + ("/" if child.is_dir() else ""))
    return entries


BUILTIN_TOOLS: dict[str, Tool] = {
    t.name: t for t in (echo, read, list_files, write_file, edit_file, grep, glob)
}
OPT_IN_TOOLS: dict[str, Tool] = {run_command.name: run_command}
"""Built-ins that `--tools` enables only with an explicit opt-in (they run programs)."""
