"""§3 of the hardening review: the workspace against hostile content.

Real files, links, FIFOs and a UNIX socket in a temporary workspace; every tool called
through the ToolExecutor as a model's call would be. A FIFO must never hang a tool: every
call here is bounded by `asyncio.wait_for` and its elapsed time asserted.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from loopwright.messages import ToolCall
from loopwright.tools import (
    BUILTIN_TOOLS,
    ToolContext,
    ToolExecutor,
    ToolRegistry,
    search,
    workspace_context,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("hello\nworld\n")
    os.mkfifo(root / "pipe")
    (root / "sub").mkdir()
    os.mkfifo(root / "sub" / "pipe2")
    return root


async def call(root: Path, tool: str, /, **arguments: Any) -> tuple[str, bool, float]:
    """(content, is_error, elapsed seconds) of one tool call; fails the test past 5 s."""
    executor = ToolExecutor(
        ToolRegistry(BUILTIN_TOOLS.values()), context=ToolContext("r", workspace=root)
    )
    started = time.monotonic()
    result = await asyncio.wait_for(
        executor.execute(ToolCall(id="c", name=tool, arguments=arguments)), 5
    )
    return result.content, result.is_error, time.monotonic() - started


async def test_a_link_planted_at_the_old_temp_name_gets_nothing(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    (ws / ".target.txt.loopwright-tmp").symlink_to(outside)
    content, is_error, _ = await call(ws, "write_file", path="target.txt", content="new")
    assert not is_error, content
    assert outside.read_text() == "untouched"
    assert (ws / "target.txt").read_text() == "new"
    assert not (ws / "target.txt").is_symlink()
    (ws / "target.txt").write_text("old text here\n")
    content, is_error, _ = await call(
        ws, "edit_file", path="target.txt", old_text="old", new_text="new"
    )
    assert not is_error, content
    assert outside.read_text() == "untouched"
    leftovers = [p.name for p in ws.iterdir() if p.name.endswith(".loopwright-tmp")]
    assert leftovers == [".target.txt.loopwright-tmp"]  # only the planted link


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read", {"path": "pipe"}),
        ("write_file", {"path": "pipe", "content": "x"}),
        ("edit_file", {"path": "pipe", "old_text": "a", "new_text": "b"}),
        ("read", {"path": "sock"}),
        ("write_file", {"path": "sock", "content": "x"}),
    ],
)
async def test_file_tools_refuse_fifos_and_sockets(
    ws: Path, tool: str, arguments: dict[str, Any]
) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(ws / "sock"))
        content, is_error, elapsed = await call(ws, tool, **arguments)
    assert is_error and "not a regular file" in content, content
    assert elapsed < 2.0
    assert (ws / "pipe").is_fifo()  # not replaced by a regular file


@pytest.mark.subprocess
async def test_grep_glob_and_list_files_skip_fifos(ws: Path) -> None:
    content, is_error, elapsed = await call(ws, "grep", pattern="o")
    assert not is_error and "notes.txt:1: hello" in content and "pipe" not in content
    assert elapsed < 3.0
    content, is_error, _ = await call(ws, "grep", pattern="o", path="sub")
    assert content.startswith("no matches")
    listed, _, _ = await call(ws, "list_files")
    assert "pipe" not in listed and "notes.txt" in listed
    globbed, _, _ = await call(ws, "glob", pattern="**/*")
    assert "pipe" not in globbed and "notes.txt" in globbed


def test_the_workspace_prompt_does_not_open_a_named_fifo(ws: Path) -> None:
    started = time.monotonic()
    text = workspace_context(ws, "look at pipe and notes.txt")
    assert time.monotonic() - started < 2.0
    assert "notes.txt (2 lines)" in text and "pipe" not in text.split("request:")[-1]


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        "vendor/lib/.git/config",  # a nested repository
        "vendor/mod/.git",  # a submodule's gitlink file
        ".GIT/hooks/pre-commit",
        "hooklink/pre-commit",  # a link into a nested .git
    ],
)
async def test_every_git_folder_is_protected(ws: Path, path: str) -> None:
    (ws / "vendor" / "lib" / ".git").mkdir(parents=True)
    (ws / "vendor" / "lib" / ".git" / "config").write_text("[core]\n")
    (ws / "vendor" / "lib" / ".git" / "hooks").mkdir()
    (ws / "vendor" / "mod").mkdir()
    (ws / "vendor" / "mod" / ".git").write_text("gitdir: ../../.git/modules/mod\n")
    (ws / "hooklink").symlink_to(ws / "vendor" / "lib" / ".git" / "hooks")
    for tool, extra in (
        ("write_file", {"content": "x"}),
        ("edit_file", {"old_text": "[", "new_text": "("}),
    ):
        content, is_error, _ = await call(ws, tool, path=path, **extra)
        assert is_error and "refusing to write inside .git" in content, (tool, content)
    assert (ws / "vendor" / "lib" / ".git" / "config").read_text() == "[core]\n"
    assert not (ws / "vendor" / "lib" / ".git" / "hooks" / "pre-commit").exists()


async def test_a_refusal_does_not_reveal_where_a_link_points(ws: Path, tmp_path: Path) -> None:
    hidden = tmp_path / "private-area" / "deep" / "target-name.txt"
    hidden.parent.mkdir(parents=True)
    hidden.write_text("x")
    (ws / "innocent").symlink_to(hidden)
    (ws / "dangling").symlink_to(tmp_path / "nowhere-name")
    for path in ("innocent", "dangling"):
        for tool, extra in (("read", {}), ("write_file", {"content": "y"})):
            content, is_error, _ = await call(ws, tool, path=path, **extra)
            assert is_error and "through a symlink" in content, content
            assert "private-area" not in content and "target-name" not in content
            assert "nowhere-name" not in content
    assert hidden.read_text() == "x"


@pytest.mark.subprocess
async def test_a_catastrophic_regex_is_stopped_and_the_loop_stays_free(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "GREP_TIMEOUT_S", 0.5)
    (ws / "evil.txt").write_text("a" * 40 + "!\n")
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.02)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    content, is_error, elapsed = await call(ws, "grep", pattern="(a+)+$", path="evil.txt")
    ticking.cancel()
    assert is_error and "grep stopped after" in content and "too slow" in content, content
    assert elapsed < 2.5  # limit 0.5 s; the match alone would take hours
    assert max(gaps) < 0.3  # the event loop kept running meanwhile
