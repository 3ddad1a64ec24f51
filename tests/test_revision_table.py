"""The revisions of the engine's behaviour are one table of switches (prompts.REVISIONS):
no module reads a revision by its number, and a run looks its revision up once, when it
is set up."""

from __future__ import annotations

import ast
from pathlib import Path

import loopwright
from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.prompts._revisions import REVISIONS
from loopwright.testing import ScriptedModel

SRC = Path(loopwright.__file__).parent
TABLE = SRC / "prompts" / "_revisions.py"


def names_a_revision(node: ast.expr) -> bool:
    """A name or an attribute that says it is a revision (`revision`, `x.revision`)."""
    if isinstance(node, ast.Name):
        return "revision" in node.id
    return isinstance(node, ast.Attribute) and "revision" in node.attr


def revision_numbers_compared(source: str, name: str) -> list[str]:
    """Where `source` compares a revision with a number (`revision > 1`, `revision in
    (4, 5)`), as `name:line`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        numbers = [
            side
            for side in sides
            if (isinstance(side, ast.Constant) and type(side.value) is int)
            or (isinstance(side, (ast.Tuple, ast.List, ast.Set)) and side.elts)
        ]
        if numbers and any(names_a_revision(side) for side in sides):
            found.append(f"{name}:{node.lineno}")
    return found


def test_no_module_compares_revision_numbers() -> None:
    compared = [
        where
        for path in sorted(SRC.rglob("*.py"))
        if path != TABLE
        for where in revision_numbers_compared(
            path.read_text(encoding="utf-8"), str(path.relative_to(SRC))
        )
    ]
    assert compared == []


def test_the_check_finds_a_comparison() -> None:
    source = "def f(options):\n    return options.revision >= 6 or revision in (1, 2)\n"
    assert revision_numbers_compared(source, "f.py") == ["f.py:2", "f.py:2"]
    assert revision_numbers_compared("ok = options.revision in REVISIONS\n", "g.py") == []


def test_each_revision_is_the_entry_its_number_names() -> None:
    assert list(REVISIONS) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert all(REVISIONS[number].number == number for number in REVISIONS)


def test_a_run_is_set_up_with_its_revision_s_switches() -> None:
    for number in REVISIONS:
        agent = AgentExecutor(ScriptedModel([]), [], options=AgentOptions(revision=number))
        setup = agent.setup("hi", agent.run_context("run_revision"))
        assert setup.revision is REVISIONS[number]
