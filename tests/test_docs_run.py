"""Docs that run: every Python and shell block of README.md and docs/ is run here, or says
why not.

- Every fenced block names its language (```text for output and diagrams).
- A block is not run when the line before it is `<!-- not run: REASON -->` (the reason is
  required: a key, a server the suite does not start, a fragment of the reader's code).
- A `python` block runs as a module body (top-level `await` allowed) in a fresh namespace,
  from a copy of the repository's examples/, and must not raise.
- An `sh` block runs command by command (a `\\` continues a line, `# ...` is a comment):
  each must be a `loopwright` command, run in this process from a copy of the repository's
  examples/ with a home folder and run store of the test's own, and must exit 0.
"""

from __future__ import annotations

import ast
import asyncio
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType

import pytest

from inprocess_cli import clean_env, invoke

ROOT = Path(__file__).resolve().parents[1]
DOCS = [
    ROOT / "README.md",
    *sorted(p for p in (ROOT / "docs").rglob("*.md") if "notes" not in p.parts),
]
"""README.md and every page under docs/ (the tutorial's included), but the design notes."""
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
NOT_RUN = re.compile(r"<!-- not run: (\S[^>]*\S) -->[ \t]*$")
SHELL = {"sh", "bash", "shell", "console"}


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    language: str
    text: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            reason = NOT_RUN.search(before)
            line = text.count("\n", 0, match.start()) + 1
            not_run = reason.group(1) if reason else None
            found.append(Block(doc, line, match.group(1).strip(), match.group(2), not_run))
    return found


ALL = blocks()
RUN = [b for b in ALL if b.not_run is None and (b.language == "python" or b.language in SHELL)]


def test_the_tutorial_pages_are_run() -> None:
    tutorial = {b.doc.name for b in RUN if b.doc.parent.name == "tutorial"}
    assert len(tutorial) >= 8, f"the tutorial's pages have no runnable block: {sorted(tutorial)}"


def test_every_block_names_its_language_and_a_skipped_one_says_why() -> None:
    unnamed = [b.where for b in ALL if not b.language]
    assert unnamed == [], "name each block's language (python, sh, text, toml...)"
    marked_elsewhere = [b.where for b in ALL if b.not_run and b.language not in {"python", *SHELL}]
    assert marked_elsewhere == [], "only python and sh blocks are run, so only they are marked"
    assert len(RUN) >= 5, "the docs lost their runnable examples"


@pytest.mark.parametrize("block", [b for b in RUN if b.language == "python"], ids=lambda b: b.where)
def test_python_block_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    for name, value in clean_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    module = ModuleType("docs_block")  # a real module: dataclasses look their module up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    outcome = eval(_compiled(block), module.__dict__)  # the docs' own example
    if asyncio.iscoroutine(outcome):
        asyncio.run(outcome)


def _compiled(block: Block) -> CodeType:
    source = "\n" * (block.line) + block.text  # tracebacks point at the doc's own line
    code: CodeType = compile(source, str(block.doc), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    return code


def commands(text: str) -> list[list[str]]:
    """The block's commands as argument lists: continuations joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            found.append(words)
    return found


@pytest.mark.parametrize("block", [b for b in RUN if b.language in SHELL], ids=lambda b: b.where)
def test_shell_block_runs(block: Block, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for words in commands(block.text):
        assert words[0] == "loopwright", (
            f"{block.where}: `{shlex.join(words)}` is not a loopwright command: mark the block "
            "<!-- not run: REASON --> or run it here"
        )
        done = invoke(words[1:], env=clean_env(tmp_path), cwd=tmp_path)
        assert done.code == 0, f"{block.where}: `{shlex.join(words)}`\n{done.both}"
