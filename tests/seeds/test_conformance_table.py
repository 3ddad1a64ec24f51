"""docs/notes/seeds-conformance.md is a conformance table that cannot go stale: each seed's requirement lines
have a row, each row quotes its seed line, names tests that exist, and says why where
loopwright differs; the summary counts are the rows'.

The seeds are read from `shared/seeds/` in a folder above the repository (the project's
`../shared/seeds/`), or from `$LOOPWRIGHT_SEEDS`; without them, the two tests that compare
the table with the seeds' text are skipped, saying so, and the rest still run.
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "notes" / "seeds-conformance.md"
HEADER = "| line | requirement | status | where | why it differs |"
STATUSES = ("holds", "differs", "n/a", "open")
SECTION = re.compile(r"^## Seed (\d{3}): .+ \(`(\d{3}_\w+\.txt)`\)$")
TEST_ID = re.compile(r"`(tests/[\w/.-]+\.py)::(\w+)`")
CHECKED_BY = re.compile(r"checked by `[^`]+`")
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
LIST_ITEM = re.compile(r"^\s*(?:- |\d+\. )")
"""A requirement line of a seed: a bullet (checkboxes too) or a numbered item."""
MARKER = re.compile(r"^\s*(?:- \[ \] |- |\d+\. )")


@dataclass(frozen=True)
class Row:
    seed: str
    file: str
    line: int
    requirement: str
    status: str
    where: str
    why: str

    @property
    def label(self) -> str:
        return f"seed {self.seed} line {self.line}"


def cells(text: str) -> list[str]:
    parts = UNESCAPED_PIPE.split(text.strip())[1:-1]
    return [part.strip().replace("\\|", "|") for part in parts]


@cache
def rows() -> tuple[Row, ...]:
    found: list[Row] = []
    section: tuple[str, str] | None = None
    in_table = False
    for text in DOC.read_text(encoding="utf-8").splitlines():
        heading = SECTION.match(text)
        if heading:
            section, in_table = (heading.group(1), heading.group(2)), False
            continue
        if text.strip() == HEADER:
            assert section is not None, "a conformance table outside a seed's section"
            in_table = True
            continue
        if in_table and text.startswith("| ---"):
            continue
        if in_table and text.startswith("|"):
            assert section is not None
            line, requirement, status, where, why = cells(text)
            found.append(Row(section[0], section[1], int(line), requirement, status, where, why))
        else:
            in_table = False
    return tuple(found)


@cache
def seeds_folder() -> Path | None:
    given = os.environ.get("LOOPWRIGHT_SEEDS")
    if given:
        return Path(given)
    for folder in ROOT.parents:
        if (folder / "shared" / "seeds").is_dir():
            return folder / "shared" / "seeds"
    return None


def seed_lines(file: str) -> list[str]:
    folder = seeds_folder()
    if folder is None or not (folder / file).is_file():
        pytest.skip(f"the seed {file} is not here (../shared/seeds/ or $LOOPWRIGHT_SEEDS)")
    return (folder / file).read_text(encoding="utf-8").splitlines()


def test_the_table_has_a_section_for_each_seed_with_rows_in_line_order() -> None:
    by_seed: dict[str, list[int]] = {}
    for row in rows():
        by_seed.setdefault(row.seed, []).append(row.line)
    assert sorted(by_seed) == ["000", "001", "002", "003", "004"]
    for seed, lines in by_seed.items():
        assert lines == sorted(set(lines)), f"seed {seed}: rows out of order or repeated"


def test_every_row_has_a_status_its_tests_and_its_reason() -> None:
    problems = []
    for row in rows():
        tests = TEST_ID.findall(row.where)
        if row.status not in STATUSES:
            problems.append(f"{row.label}: status {row.status!r}")
        if row.status in ("holds", "differs") and not (tests or CHECKED_BY.search(row.where)):
            problems.append(f"{row.label}: {row.status} but names no test")
        if row.status != "holds" and not row.why:
            problems.append(f"{row.label}: {row.status} without a reason")
        if row.status == "holds" and row.why:
            problems.append(f"{row.label}: holds, yet says why it differs")
    assert problems == []
    assert sum(bool(CHECKED_BY.search(r.where)) for r in rows()) == 1  # mypy, seed 000


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


def test_every_named_test_exists() -> None:
    named = {(file, name) for row in rows() for file, name in TEST_ID.findall(row.where)}
    assert len(named) > 100
    missing = []
    known: dict[str, set[str]] = {}
    for file, name in sorted(named):
        path = ROOT / file
        if not path.is_file():
            missing.append(f"{file} (no such file)")
            continue
        if name not in known.setdefault(file, defined_tests(path)):
            missing.append(f"{file}::{name}")
    assert missing == []


def test_the_summary_counts_are_the_rows() -> None:
    text = DOC.read_text(encoding="utf-8")
    summary = text[text.index("| seed | requirements |") :].split("\n\n")[0].splitlines()[2:]
    counted = {}
    for line in summary:
        name, total, *by_status = cells(line)
        counted[name[:3]] = (int(total), *map(int, by_status))
    for seed in ("000", "001", "002", "003", "004"):
        statuses = Counter(row.status for row in rows() if row.seed == seed)
        expected = (sum(statuses.values()), *(statuses[s] for s in STATUSES))
        assert counted[seed] == expected, f"seed {seed}"


def normalized(text: str) -> str:
    return " ".join(MARKER.sub("", text).split())


@pytest.mark.parametrize("seed", ["000", "001", "002", "003", "004"])
def test_each_row_quotes_its_seed_line(seed: str) -> None:
    """The requirement cell is the seed's own line (cut short with "…" when long)."""
    seed_rows = [row for row in rows() if row.seed == seed]
    lines = seed_lines(seed_rows[0].file)
    wrong = []
    for row in seed_rows:
        said = normalized(lines[row.line - 1]) if row.line <= len(lines) else ""
        quoted = " ".join(row.requirement.split())
        ok = said.startswith(quoted[:-1].rstrip()) if quoted.endswith("…") else said == quoted
        if not ok or not quoted:
            wrong.append(f"{row.label}: {quoted!r} is not {said!r}")
    assert wrong == []


@pytest.mark.parametrize("seed", ["000", "001", "002", "003", "004"])
def test_every_requirement_line_of_the_seed_has_a_row(seed: str) -> None:
    """Every bullet and numbered line of the seed is in the table."""
    seed_rows = [row for row in rows() if row.seed == seed]
    lines = seed_lines(seed_rows[0].file)
    wanted = {n for n, text in enumerate(lines, 1) if LIST_ITEM.match(text)}
    assert wanted - {row.line for row in seed_rows} == set()
