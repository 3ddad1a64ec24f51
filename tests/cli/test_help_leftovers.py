"""Every command's `--help` says what the command does at its top, names no option it does
not have (`--engine`), and files each option under a heading that fits it."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import cli

from loopwright.cli import build_parser


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[str]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs and path:
        yield " ".join(path)
    for action in subs:
        for name, child in action.choices.items():
            yield from _commands(child, (*path, name))


COMMANDS = sorted(_commands(build_parser()))


def _description(help_text: str) -> str:
    """The paragraph after the usage lines, before the first heading."""
    paragraphs = help_text.split("\n\n")
    text = paragraphs[1] if len(paragraphs) > 1 else ""
    return "" if re.match(r"^[a-z ]+:\n", text + "\n") else text


@pytest.mark.parametrize("command", COMMANDS)
def test_each_commands_help_says_what_it_does_and_names_only_its_options(
    command: str, tmp_path: Path
) -> None:
    shown = cli(*command.split(), "--help", home=tmp_path)
    assert shown.code == 0, shown.err
    assert _description(shown.out).strip(), f"`loopwright {command} --help` has no description"
    if not re.search(r"^\s+--engine\b", shown.out, re.M):
        assert "with --engine" not in shown.out.split("\n\n", 2)[-1]


@pytest.mark.parametrize("command", ["runs approve", "task approve"])
def test_a_decisions_options_are_under_their_own_heading(command: str, tmp_path: Path) -> None:
    shown = cli(*command.split(), "--help", home=tmp_path).out
    headings = {m.group(1): m.start() for m in re.finditer(r"^([a-z ]+):$", shown, re.M)}
    assert "task" not in headings
    decision = headings["decision"]
    after = min((at for at in headings.values() if at > decision), default=len(shown))
    assert all(flag in shown[decision:after] for flag in ("--reject", "--reason", "--by"))
