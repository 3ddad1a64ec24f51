"""Every command's `--help` ends with an example or two, and each example is a command line
the parser takes (the options exist, the values are of the right kind)."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest

from loopwright.cli import build_parser, main


def _leaves() -> list[str]:
    found = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for action in subs:
            for name, child in action.choices.items():
                walk(child, (*path, name))
        if not subs and path:
            found.append(" ".join(path))

    walk(build_parser(), ())
    return found


@pytest.mark.parametrize("command", sorted(_leaves()))
def test_each_help_ends_with_examples_that_parse(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([*command.split(), "--help"])
    help_text = capsys.readouterr().out
    assert "\nexamples:\n  loopwright " in help_text
    examples = help_text.rstrip().split("\nexamples:\n")[-1].splitlines()  # they end the help
    assert examples and all(line.startswith("  ") for line in examples), examples
    for example in examples:
        parts = re.split(r"\s+(?:\||>|#)\s", example.strip())  # the loopwright part of a pipe
        argv = shlex.split(next(part for part in parts if part.startswith("loopwright ")))
        assert argv[0] == "loopwright" and argv[1 : 1 + len(command.split())] == command.split()
        build_parser().parse_args(argv[1:])  # exits (a SystemExit) on a bad option or value


METAVARS = {"N", "S", "USD", "TOKENS", "SEQ", "PORT", "PATH", "DIR", "URL", "HOST", "HOST:PORT",
            "NAME", "NAME=VALUE", "VALUE", "SPEC", "TEXT", "IDS", "TOOLS", "SERVER", "CMD",
            "RUN_ID"}  # fmt: skip


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    found = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        found.append((" ".join(path), parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, (*path, name))

    walk(build_parser(), ())
    return found


def test_one_group_a_title_and_one_word_a_kind_of_value() -> None:
    problems = []
    for path, parser in _parsers():
        titles = [group.title for group in parser._action_groups]
        problems += [f"{path}: two {t!r} groups" for t in set(titles) if titles.count(t) > 1]
        for action in parser._actions:
            takes_value = action.option_strings and action.nargs != 0 and not action.choices
            if takes_value and action.dest != "help" and action.metavar not in METAVARS:
                problems.append(f"{path} {action.option_strings[-1]}: {action.metavar}")
    assert problems == []
