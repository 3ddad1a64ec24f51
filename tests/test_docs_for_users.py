"""The docs speak to users: no document they do not have is named outside docs/seeds.md,
no page reads as a diary of the work (issues, sessions, dated headings: history is in
CHANGELOG.md), no page names a prompt revision number or a test file (what is true now, not
how it was measured: that is in docs/notes/), and what the docs say about resuming task runs
is what `runs resume` does (tests/store/test_task_crash.py kills task runs and resumes them
with the real command).

The user pages are README.md and every page under docs/ but the design notes (docs/notes/)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = re.compile(r"\bseed(?:s|'s|s')?\b", re.I)
ALLOWED = ("seeds.md", "tests/seeds/")
"""The page that maps the seeds' names to loopwright's, and links to it; test paths."""
DIARY = re.compile(
    r"\bissue \d+|\bissue's\b|\b(?:this|last|that|same|one) session\b|\bsession ended\b"
    r"|\bthis work\b|^#+ .*\b\d{4}-\d{2}-\d{2}\b|\b(?:before|since|rerun|on|checked) \d{4}-\d{2}-\d{2}",
    re.I,
)
"""What a lab notebook says and a user's page does not: the issue or session a figure came
from, a heading dated by when the work was done, what was so on a past day."""


INTERNAL = re.compile(r"\brevisions? [0-9]|\brevision N\b|\btests/[\w/.-]*\.py\b", re.I)
"""What only a developer of loopwright needs: which prompt revision a figure was measured
with ("revision 6", "since revision 5"), which test file holds a claim."""


def user_pages() -> list[Path]:
    docs = ROOT / "docs"
    pages = (p for p in docs.rglob("*.md") if "notes" not in p.relative_to(docs).parts)
    return [ROOT / "README.md", *sorted(pages)]


def test_user_pages_include_the_tutorial_and_leave_out_the_notes() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in user_pages()}
    assert "docs/tutorial/01-first-agent.md" in names
    assert not any(name.startswith("docs/notes/") for name in names)


def test_no_page_but_seeds_md_names_a_seed() -> None:
    found = []
    for page in user_pages():
        if page.name == "seeds.md":
            continue
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            text = line
            for allowed in ALLOWED:
                text = text.replace(allowed, "")
            if SEED.search(text):
                found.append(f"{page.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert found == []


def test_no_page_is_a_diary() -> None:
    """benchmarks.md is held by its structure instead (tests/test_benchmarks_page.py): each
    of its figures carries the date it was taken."""
    found = []
    for page in user_pages():
        if page.name == "benchmarks.md":
            continue
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if DIARY.search(line):
                found.append(f"{page.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert found == []


def test_no_page_names_a_prompt_revision_or_a_test_file() -> None:
    found = []
    for page in user_pages():
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if INTERNAL.search(line):
                found.append(f"{page.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert found == []


def test_store_md_says_task_runs_are_resumed() -> None:
    text = " ".join((ROOT / "docs" / "store.md").read_text(encoding="utf-8").split())
    assert "they are not resumed" not in text
    assert "Task runs are stored and resumed the same way: `loopwright runs resume RUN_ID`" in text
