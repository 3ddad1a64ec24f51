"""The custom tools example runs, and the CLI keeps run_command behind --allow-commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.subprocess
def test_custom_tools_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "custom_tools.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.splitlines() == [
        '["name", "price"]',
        "order_total: 11.00 EUR",
        "write_file: created receipt.md (27 bytes, 2 lines)",
        "edit_file: edited receipt.md: replaced 1 occurrence (line 2)",
        "count_files: 1",
        "answer: Receipt written: 11.00 EUR",
        "modified: receipt.md",
    ]


def scripted(tmp_path: Path) -> str:
    script = [
        {"thought": "t", "action": "run_command", "action_input": {"command": ["echo", "hi"]}},
        {"thought": "t", "final_answer": "ran it"},
    ]
    path = tmp_path / "script.json"
    path.write_text(json.dumps([json.dumps(item) for item in script]))
    return f"scripted:{path}"


def test_cli_refuses_run_command_without_allow_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "x", "--model", scripted(tmp_path), "--tools", "run_command", "--json"])
    assert code == 2
    assert "enable it explicitly with --allow-commands" in capsys.readouterr().err


@pytest.mark.subprocess
def test_cli_runs_run_command_with_allow_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "x", "--model", scripted(tmp_path), "--tools", "run_command", "--json"]
    code = main([*args, "--allow-commands", "--workspace", str(tmp_path)])
    assert code == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    finished = next(e for e in events if e["type"] == "tool_call")
    assert finished["result"] == "$ echo hi\n[exit code 0]\nhi\n"
