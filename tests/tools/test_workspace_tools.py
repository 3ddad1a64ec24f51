"""Built-in file tools: confinement to the workspace (each escape), read, list, write, edit,
grep, glob; writes recorded with their hashes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from loopwright.messages import ToolCall
from loopwright.tools import BUILTIN_TOOLS, ToolContext, ToolExecutor, ToolRegistry


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        "def main():\n    return 1\n\n\ndef helper():\n    return 1\n"
    )
    (root / "README.md").write_text("# Demo\nline two\nline three\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "secret.txt").write_text("top secret")
    return root


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(run_id="r", workspace=workspace)


async def call(ctx: ToolContext, tool_name: str, /, **arguments: Any) -> tuple[str, bool]:
    executor = ToolExecutor(ToolRegistry(BUILTIN_TOOLS.values()), context=ctx)
    result = await executor.execute(ToolCall(id="c", name=tool_name, arguments=arguments))
    return result.content, result.is_error


def sha(data: str) -> str:
    return hashlib.sha256(data.encode()).hexdigest()


# -- confinement ---------------------------------------------------------------------------


@pytest.mark.parametrize("tool_name", ["read", "list_files", "grep", "write_file", "edit_file"])
async def test_dotdot_escape_is_refused_by_every_file_tool(
    ctx: ToolContext, tool_name: str
) -> None:
    arguments: dict[str, Any] = {"path": "../secret.txt"}
    if tool_name == "grep":
        arguments["pattern"] = "secret"
    if tool_name == "write_file":
        arguments["content"] = "x"
    if tool_name == "edit_file":
        arguments.update(old_text="top", new_text="bottom")
    content, is_error = await call(ctx, tool_name, **arguments)
    assert is_error
    assert f"path '../secret.txt' is outside the workspace {ctx.workspace}" in content
    assert (ctx.workspace.parent / "secret.txt").read_text() == "top secret"


async def test_absolute_path_outside_is_refused_and_inside_is_allowed(ctx: ToolContext) -> None:
    outside = str(ctx.workspace.parent / "secret.txt")
    content, is_error = await call(ctx, "read", path=outside)
    assert is_error and "is outside the workspace" in content
    content, is_error = await call(ctx, "read", path=str(ctx.workspace / "README.md"))
    assert not is_error and content.startswith("# Demo")


async def test_dotdot_that_stays_inside_is_allowed(ctx: ToolContext) -> None:
    content, is_error = await call(ctx, "read", path="src/../README.md", start_line=2, end_line=2)
    assert (content, is_error) == ("line two\n", False)


async def test_symlinked_file_escape_is_refused(ctx: ToolContext) -> None:
    (ctx.workspace / "link.txt").symlink_to(ctx.workspace.parent / "secret.txt")
    content, is_error = await call(ctx, "read", path="link.txt")
    assert is_error and "leads outside the workspace" in content and "through a symlink" in content
    content, is_error = await call(ctx, "write_file", path="link.txt", content="overwritten")
    assert is_error and "through a symlink" in content
    assert (ctx.workspace.parent / "secret.txt").read_text() == "top secret"


@pytest.mark.subprocess
async def test_symlinked_folder_and_dangling_symlink_escapes_are_refused(ctx: ToolContext) -> None:
    (ctx.workspace / "out").symlink_to(ctx.workspace.parent)
    (ctx.workspace / "dangling").symlink_to(ctx.workspace.parent / "new.txt")
    content, is_error = await call(ctx, "write_file", path="out/created.txt", content="x")
    assert is_error and "through a symlink" in content
    content, is_error = await call(ctx, "write_file", path="dangling", content="x")
    assert is_error and "through a symlink" in content
    assert not (ctx.workspace.parent / "created.txt").exists()
    assert not (ctx.workspace.parent / "new.txt").exists()
    content, _ = await call(ctx, "grep", pattern="secret")
    assert content == "no matches for 'secret' in ."
    content, _ = await call(ctx, "glob", pattern="**/*.txt")
    assert "secret" not in content


async def test_readable_roots_are_readable_but_not_writable(
    ctx: ToolContext, tmp_path: Path
) -> None:
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "reference.md").write_text("the reference\n")
    ctx.readable_roots = [skill]
    content, is_error = await call(ctx, "read", path=str(skill / "reference.md"))
    assert (content, is_error) == ("the reference\n", False)
    content, is_error = await call(ctx, "write_file", path=str(skill / "reference.md"), content="x")
    assert is_error and "outside the workspace" in content


# -- read and list_files -------------------------------------------------------------------


async def test_read_line_ranges_and_clear_errors(ctx: ToolContext, workspace: Path) -> None:
    assert await call(ctx, "read", path="README.md", start_line=2) == (
        "line two\nline three\n",
        False,
    )
    content, is_error = await call(ctx, "read", path="README.md", start_line=9)
    assert is_error and "'README.md' has 3 lines; start_line 9 is past the end" in content
    content, is_error = await call(ctx, "read", path="README.md", start_line=3, end_line=2)
    assert is_error and "invalid line range 3-2" in content
    content, is_error = await call(ctx, "read", path="src")
    assert is_error and "is a folder; use list_files" in content
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02")
    content, is_error = await call(ctx, "read", path="blob.bin")
    assert is_error and "'blob.bin' is a binary file" in content
    content, is_error = await call(ctx, "read", path="missing.md")
    assert is_error and "no such file or folder in the workspace: 'missing.md'" in content


async def test_list_files_hides_git(ctx: ToolContext) -> None:
    assert await call(ctx, "list_files") == ('["README.md", "src/"]', False)


# -- write_file and edit_file --------------------------------------------------------------


async def test_write_file_creates_folders_and_records_hashes(ctx: ToolContext) -> None:
    content, is_error = await call(ctx, "write_file", path="notes/todo.md", content="a\nb\n")
    assert not is_error and content.startswith("created notes/todo.md (4 bytes")
    assert (ctx.workspace / "notes" / "todo.md").read_text() == "a\nb\n"
    assert ctx.modified_files == {"notes/todo.md": (None, sha("a\nb\n"))}
    content, _ = await call(ctx, "write_file", path="notes/todo.md", content="c\n")
    assert content.startswith("overwrote notes/todo.md")
    assert ctx.modified_files == {"notes/todo.md": (None, sha("c\n"))}


async def test_write_file_refuses_git_internals(ctx: ToolContext) -> None:
    content, is_error = await call(ctx, "write_file", path=".git/HEAD", content="x")
    assert is_error and "refusing to write inside .git" in content


async def test_edit_file_replaces_a_unique_exact_string(ctx: ToolContext, workspace: Path) -> None:
    before = (workspace / "src" / "app.py").read_text()
    content, is_error = await call(
        ctx,
        "edit_file",
        path="src/app.py",
        old_text="def main():\n    return 1",
        new_text="def main():\n    return 2",
    )
    assert (content, is_error) == ("edited src/app.py: replaced 1 occurrence (line 1)", False)
    after = (workspace / "src" / "app.py").read_text()
    assert after == before.replace("return 1", "return 2", 1)
    assert ctx.modified_files == {"src/app.py": (sha(before), sha(after))}


async def test_edit_file_fails_clearly_when_absent_or_not_unique(ctx: ToolContext) -> None:
    content, is_error = await call(
        ctx, "edit_file", path="src/app.py", old_text="return 3", new_text="x"
    )
    assert is_error and "old_text was not found in 'src/app.py'" in content
    content, is_error = await call(
        ctx, "edit_file", path="src/app.py", old_text="return 1", new_text="x"
    )
    assert is_error and "old_text appears 2 times in 'src/app.py' (at lines 2, 6)" in content
    assert ctx.modified_files == {}
    content, is_error = await call(
        ctx,
        "edit_file",
        path="src/app.py",
        old_text="return 1",
        new_text="return 0",
        replace_all=True,
    )
    assert not is_error and "replaced 2 occurrences" in content
    content, is_error = await call(ctx, "edit_file", path="nope.py", old_text="a", new_text="b")
    assert is_error and "no such file in the workspace: 'nope.py' (use write_file" in content


async def test_edit_file_keeps_crlf_line_endings_and_file_mode(
    ctx: ToolContext, workspace: Path
) -> None:
    script = workspace / "run.sh"
    script.write_bytes(b"echo one\r\necho two\r\n")
    os.chmod(script, 0o755)
    await call(ctx, "edit_file", path="run.sh", old_text="one", new_text="uno")
    assert script.read_bytes() == b"echo uno\r\necho two\r\n"
    assert script.stat().st_mode & 0o777 == 0o755


# -- grep and glob -------------------------------------------------------------------------


@pytest.mark.subprocess
async def test_grep_finds_lines_with_paths_and_numbers(ctx: ToolContext) -> None:
    content, is_error = await call(ctx, "grep", pattern=r"def \w+\(")
    assert not is_error
    assert content.splitlines() == ["src/app.py:1: def main():", "src/app.py:5: def helper():"]
    content, _ = await call(ctx, "grep", pattern="LINE", ignore_case=True, include="*.md")
    assert content.splitlines() == ["README.md:2: line two", "README.md:3: line three"]
    content, _ = await call(ctx, "grep", pattern="return", max_matches=1)
    assert content.splitlines() == [
        "src/app.py:2: return 1",
        "[1 more matches not shown; narrow the pattern, path or include]",
    ]


async def test_grep_rejects_a_bad_regex(ctx: ToolContext) -> None:
    content, is_error = await call(ctx, "grep", pattern="def (")
    assert is_error and "invalid regular expression 'def ('" in content


async def test_glob_lists_matches_and_refuses_escapes(ctx: ToolContext) -> None:
    assert await call(ctx, "glob", pattern="**/*.py") == ('["src/app.py"]', False)
    assert await call(ctx, "glob", pattern="*") == ('["README.md", "src/"]', False)
    content, is_error = await call(ctx, "glob", pattern="../*")
    assert is_error and "must be relative and stay inside the folder" in content
    content, is_error = await call(ctx, "glob", pattern="/etc/*")
    assert is_error and "must be relative" in content
