"""Every option of every subcommand says what it does and its default; options are grouped."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

from cli_helpers import cli

from loopwright.cli import build_parser


def subcommands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield (*path, name), child
                yield from subcommands(child, (*path, name))


def test_every_option_of_every_subcommand_has_help_with_its_default() -> None:
    missing = []
    seen = 0
    for path, parser in subcommands(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            seen += 1
            label = f"{' '.join(path)} {action.option_strings or action.dest}"
            if not action.help:
                missing.append(f"{label}: no help")
            elif action.option_strings and "(default: " not in action.help:
                missing.append(f"{label}: no default in {action.help!r}")
            elif (
                not action.option_strings
                and action.nargs in ("?", "*")
                and "default" not in action.help
            ):
                missing.append(f"{label}: optional positional without its default")
    assert seen > 80
    assert missing == []


def test_run_help_groups_options_and_names_the_defaults(tmp_path: Path) -> None:
    result = cli("run", "--help", home=tmp_path, env=None)
    assert result.code == 0, result.err
    text = result.out
    titles = ["model:", "tools:", "guardrails:", "secrets:", "store:", "output:"]
    positions = [text.index(f"\n{title}\n") for title in titles]
    assert positions == sorted(positions)
    guardrails = text[positions[2] : positions[3]]
    for flag in ("--max-iterations", "--tier", "--iteration-timeout", "--max-tokens-total",
                 "--repetition-threshold", "--no-progress-limit"):  # fmt: skip
        assert flag in guardrails
    flat = " ".join(text.split())
    assert "stop after this many identical tool calls in a row (default: 3; config: " in flat
    assert "(default: standard; config: tier)" in flat
    assert "--context-window TOKENS tokens the model sees" in flat
    assert "loopwright.toml" in flat


def test_each_subcommand_help_runs(tmp_path: Path) -> None:
    for path, _ in subcommands(build_parser()):
        if path in {("skills",), ("task",), ("runs",), ("config",), ("dev",)}:
            continue
        result = cli(*path, "--help", home=tmp_path)
        assert result.code == 0, (path, result.err)
        assert "(default: " in result.out or path == ("runs", "export"), path


def test_a_command_s_parser_is_the_same_built_alone_as_among_all_the_commands() -> None:
    from loopwright.cli import SUBCOMMANDS, command_of

    everything = dict(subcommands(build_parser()))
    assert set(SUBCOMMANDS) == {path[0] for path in everything}
    for command in SUBCOMMANDS:
        alone = dict(subcommands(build_parser(command)))
        assert command in {path[0] for path in alone}
        for path, parser in alone.items():
            assert parser.format_help() == everything[path].format_help(), path
    assert command_of(["runs", "list"]) == "runs"
    assert command_of(["--help", "runs"]) is None  # the top-level help shows every command
    assert command_of([]) is None
