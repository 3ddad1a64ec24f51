"""docs/benchmarks.md is a page of figures, not a lab notebook: every section past the method
is a table whose rows each give a command, a figure and the date it was taken (the narratives
and earlier figures are design notes under docs/notes/), and the page stays short."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "benchmarks.md"
PROSE_SECTIONS = {"Machine and method"}
"""The one section that says how, not what: it has no figures of its own."""
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def table_rows(body: str) -> list[dict[str, str]]:
    """Every table of the section as dicts keyed by the header's cells (lower case)."""
    rows: list[dict[str, str]] = []
    header: list[str] | None = None
    for line in body.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if header is None:
            header = [cell.lower() for cell in cells]
        elif not set(line) <= set("|-: "):
            rows.append(dict(zip(header, cells, strict=False)))
    return rows


def column(row: dict[str, str], name: str) -> str | None:
    for key, value in row.items():
        if key == name or key.startswith(name + " "):
            return value
    return None


def test_each_section_is_a_table_of_command_figure_and_date() -> None:
    found = sections(PAGE.read_text(encoding="utf-8"))
    assert len(found) >= 8, sorted(found)
    problems = []
    for title, body in found.items():
        if title in PROSE_SECTIONS:
            continue
        rows = table_rows(body)
        if not rows:
            problems.append(f"{title}: no table")
        for row in rows:
            command, figure, date = (column(row, name) for name in ("command", "figure", "date"))
            if not command or not (command.startswith("`") or command == "same"):
                problems.append(f"{title}: a row without a command: {row}")
            if not figure:
                problems.append(f"{title}: a row without a figure: {row}")
            if date is None or not DATE.match(date):
                problems.append(f"{title}: a row without a date: {row}")
    assert problems == []


def test_the_page_stays_short() -> None:
    assert len(PAGE.read_text(encoding="utf-8").splitlines()) <= 250
