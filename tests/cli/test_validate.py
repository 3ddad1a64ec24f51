"""`task validate` reports every problem of every file in one pass, in file order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import cli, cli_tty

TWO_PROBLEMS = """\
name: release
trigger_keywords: [release]
tools: [list_files]
inputs:
  version: "1.0"
steps:
  - name: look
    type: tool
    tool: list_files
  - name: ask
    type: gate
    message_template: "Release {results.nowhere.count}?"
  - name: ship
    type: deploy
"""
GOOD = """\
name: tidy
trigger_keywords: [tidy]
tools: [tools.py]
steps:
  - name: shout
    type: tool
    tool: shout
    args: {text: hi}
"""
TOOLS = """\
from pathlib import Path
from loopwright import tool

Path(__file__).with_name("IMPORTED").write_text("the tool file ran")


@tool
def shout(text: str) -> str:
    \"\"\"Shout.\"\"\"
    return text.upper()
"""


def test_validate_reports_every_problem_in_file_order(tmp_path: Path) -> None:
    task = tmp_path / "release.yaml"
    task.write_text(TWO_PROBLEMS)
    result = cli("task", "validate", str(task), home=tmp_path)
    assert result.code == 2
    lines = result.err.splitlines()
    assert lines == [
        f"{task}:12: step 'ask': message_template refers to step 'nowhere', which does not exist",
        f"{task}:14: step 'ship': unknown step type 'deploy' (use tool, agent or gate)",
    ]
    assert "Traceback" not in result.err


def test_validate_reads_tool_files_without_running_them(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "tidy.yaml").write_text(GOOD)
    result = cli("task", "validate", str(tmp_path / "tidy.yaml"), home=tmp_path)
    assert result.code == 0, result.err
    assert "task 'tidy', 1 steps" in result.out
    assert not (tmp_path / "IMPORTED").exists()

    (tmp_path / "tidy.yaml").write_text(GOOD.replace("tool: shout", "tool: whisper"))
    result = cli("task", "validate", str(tmp_path / "tidy.yaml"), home=tmp_path)
    assert result.code == 2
    assert f"{tmp_path / 'tidy.yaml'}:5: step 'shout': unknown tool 'whisper'" in result.err
    assert not (tmp_path / "IMPORTED").exists()


def test_a_folder_of_task_files_one_bad_file_never_hides_the_good_ones(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "tools.py").write_text(TOOLS)
    (folder / "a-release.yaml").write_text(TWO_PROBLEMS)
    (folder / "b-tidy.yaml").write_text(GOOD)
    result = cli("task", "validate", str(folder), "--json", home=tmp_path)
    assert result.code == 2
    report = json.loads(result.out)
    assert [(r["file"].rsplit("/", 1)[1], r["ok"]) for r in report] == [
        ("a-release.yaml", False),
        ("b-tidy.yaml", True),
    ]
    assert [p["line"] for p in report[0]["problems"]] == [12, 14]
    assert report[1]["task"] == "tidy" and report[1]["steps"] == 1

    # task run over the folder picks the good task; the bad file is named, not fatal
    run = cli("task", "run", str(folder), "--match", "tidy", "--json", "--yes", "--workspace",
              str(tmp_path), home=tmp_path)  # fmt: skip
    assert run.code == 0, run.err
    assert "a-release.yaml:14: step 'ship': unknown step type" in run.err
    assert '"task_complete"' in run.out


@pytest.mark.subprocess
def test_validate_on_a_terminal_colours_but_keeps_the_lines(tmp_path: Path) -> None:
    task = tmp_path / "release.yaml"
    task.write_text(TWO_PROBLEMS)
    result = cli_tty("task", "validate", str(task), home=tmp_path, columns=400)
    assert result.code == 2
    assert f"{task}:12: step 'ask'" in result.out and f"{task}:14: step 'ship'" in result.out


def test_a_script_path_through_a_file_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("not a folder", encoding="utf-8")
    bad = tmp_path / "plain" / "script.json"
    result = cli("run", "hi", "--model", f"scripted:{bad}", home=tmp_path)
    assert result.code == 2, result.err
    assert f"cannot read script file {bad}: Not a directory" in result.err
    assert "Traceback" not in result.err
