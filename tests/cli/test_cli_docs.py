"""docs/cli.md is generated from the parser; it names every command and option."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
from test_help import subcommands

from loopwright.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.subprocess
def test_docs_cli_md_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cli_docs.py"), "--check"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_docs_cli_md_names_every_command_and_option() -> None:
    page = (ROOT / "docs" / "cli.md").read_text()
    for path, parser in subcommands(build_parser()):
        if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            continue
        assert f"## `loopwright {' '.join(path)}" in page
        for action in parser._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}" in page or f", {flag}" in page, (path, flag)
    assert "`LOOPWRIGHT_MAX_ITERATIONS`" in page and "[serve]" in page
