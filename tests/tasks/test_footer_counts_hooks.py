"""A task run's footer counts every tool call it ran and says how many were its hooks':
the example's 4 steps (one a gate) and 2 hook steps read `5 tool calls run (2 by hooks)`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loopwright.cli import main

EXAMPLES = Path(__file__).parents[2] / "examples" / "tasks"


def test_the_footer_says_which_tool_calls_were_the_hooks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = shutil.copytree(EXAMPLES / "workspace", tmp_path / "ws")
    argv = ["task", "run", str(EXAMPLES / "rotate-keys.yaml"), "--workspace", str(workspace)]
    assert main([*argv, "--input", "as_of=2025-06-01", "--yes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.lstrip().startswith("→ Calling") for line in lines) == 5
    assert lines[-1] == "completed · 5 tool calls run (2 by hooks)"
