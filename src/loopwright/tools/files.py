"""Workspace tools that change files: `write_file` and `edit_file`.

Both are confined to the workspace root and record every write in the run's
`ToolContext` (path, sha256 before, sha256 after), so the run knows what it modified.
"""

from __future__ import annotations

from loopwright.errors import ToolError
from loopwright.tools._context import ToolContext
from loopwright.tools._tool import tool
from loopwright.tools._workspace import (
    decode_text,
    display_path,
    read_bytes_or_none,
    resolve_writable,
    sha256_of,
    write_atomically,
)


def _commit(ctx: ToolContext, path: str, before: bytes | None, after: bytes) -> str:
    target = resolve_writable(ctx.workspace, path)
    write_atomically(target, after)
    rel = display_path(target, ctx.workspace)
    ctx.record_write(rel, sha256_of(before), sha256_of(after))
    return rel


@tool(effect="write", idempotent=True, aliases={"file_path": "path"})
def write_file(ctx: ToolContext, path: str, content: str) -> str:
    """Create a file in the workspace, or replace its whole content. Folders are created.

    Args:
        path: file path relative to the workspace root
        content: the complete new content of the file
    """
    target = resolve_writable(ctx.workspace, path)
    before = read_bytes_or_none(target)
    data = content.encode("utf-8")
    rel = _commit(ctx, path, before, data)
    verb = "created" if before is None else "overwrote"
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return f"{verb} {rel} ({len(data):,} bytes, {lines:,} lines)"


def _line_numbers(text: str, old: str) -> list[int]:
    lines: list[int] = []
    start = text.find(old)
    while start != -1:
        lines.append(text.count("\n", 0, start) + 1)
        start = text.find(old, start + 1)
    return lines


@tool(
    effect="write",
    idempotent=False,
    aliases={"file_path": "path", "old_string": "old_text", "new_string": "new_text"},
)
def edit_file(
    ctx: ToolContext, path: str, old_text: str, new_text: str, replace_all: bool = False
) -> str:
    """Replace an exact piece of text in a workspace file.

    `old_text` must appear exactly once (include surrounding lines to make it unique),
    or set `replace_all` to change every occurrence. Whitespace and indentation count.

    Args:
        path: file path relative to the workspace root
        old_text: the exact text to replace, copied from the file
        new_text: the text to put in its place
        replace_all: replace every occurrence instead of exactly one
    """
    if not old_text:
        raise ToolError("old_text is empty: give the exact text to replace (use write_file "
                        "to create a file)")  # fmt: skip
    if old_text == new_text:
        raise ToolError("old_text and new_text are the same: nothing would change")
    target = resolve_writable(ctx.workspace, path)
    before = read_bytes_or_none(target)
    if before is None:
        raise ToolError(f"no such file in the workspace: {path!r} (use write_file to create it)")
    text = decode_text(before, path)
    found = _line_numbers(text, old_text)
    if not found:
        raise ToolError(
            f"old_text was not found in {path!r}; read the file and copy the exact text "
            "(including whitespace and indentation)"
        )
    if len(found) > 1 and not replace_all:
        lines = ", ".join(str(n) for n in found[:10])
        raise ToolError(
            f"old_text appears {len(found)} times in {path!r} (at lines {lines}); include "
            "more surrounding text to make it unique, or set replace_all to true"
        )
    updated = (
        text.replace(old_text, new_text) if replace_all else text.replace(old_text, new_text, 1)
    )
    rel = _commit(ctx, path, before, updated.encode("utf-8"))
    count = len(found) if replace_all else 1
    return f"edited {rel}: replaced {count} occurrence{'s' if count > 1 else ''} (line {found[0]})"
