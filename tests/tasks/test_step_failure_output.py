"""A failed step of a task (no model in it) is told once: the step, its error and, when the
run changed something, the command that undoes it, which works as printed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from loopwright.cli import main

TOOLS = '''
from loopwright import ToolContext, ToolError, tool


@tool(effect="write")
def save(ctx: ToolContext, path: str, text: str) -> str:
    """Write a file of the workspace.

    Args:
        path: the file
        text: what it holds
    """
    (ctx.workspace / path).write_text(text)
    return "saved"


@tool(effect="read")
def publish(ctx: ToolContext, path: str) -> str:
    """Publish a file.

    Args:
        path: the file
    """
    raise ToolError("the server refused the upload (HTTP 503)")
'''

TASK = """name: ship
description: save the notes, then publish them
tools: [tools.py]
steps:
  - name: write_notes
    type: tool
    tool: save
    args: {path: notes.txt, text: new notes}
  - name: upload
    type: tool
    tool: publish
    args_from: {path: STEP_INPUT}
"""


def _task(tmp_path: Path, upload_path: str) -> tuple[Path, Path]:
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "tools.py").write_text(TOOLS, encoding="utf-8")
    (folder / "ship.yaml").write_text(TASK.replace("STEP_INPUT", upload_path), encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("old notes", encoding="utf-8")
    return folder / "ship.yaml", workspace


def test_a_failed_tool_step_says_its_error_once_and_how_to_undo_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task, workspace = _task(tmp_path, "results.write_notes")
    store = str(tmp_path / "elsewhere.db")
    argv = ["task", "run", str(task), "--workspace", str(workspace), "--yes", "--store", store]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    shown = out + err
    assert shown.count("the server refused the upload (HTTP 503)") == 1, shown
    assert "try again" not in shown and "Attempt" not in shown  # no model reads it
    [ended] = [line for line in out.splitlines() if line.startswith("Task ship failed")]
    assert "stopped at step 'upload'" in ended
    command = ended.split("can be undone with: ", 1)[1]
    assert (workspace / "notes.txt").read_text() == "new notes"
    words = shlex.split(command)
    assert words[:3] == ["loopwright", "task", "rollback"] and store in words
    assert main(words[1:]) == 0
    assert (workspace / "notes.txt").read_text() == "old notes"


def test_a_step_that_fails_before_its_tool_runs_says_its_error_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task, workspace = _task(tmp_path, "results.write_notes.path")
    assert main(["task", "run", str(task), "--workspace", str(workspace), "--yes"]) == 1
    out, err = capsys.readouterr()
    shown = out + err
    assert shown.count("results.write_notes.path does not exist") == 1, shown
    assert "stopped at step 'upload'" in out


GATED = """name: gated
description: a gate, then a listing
tools: [list_files]
steps:
  - name: go_ahead
    type: gate
    message_template: "Go?"
  - name: look
    type: tool
    tool: list_files
"""


def test_a_gate_that_times_out_is_told_once_and_its_status_not_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = tmp_path / "gated.yaml"
    task.write_text(GATED, encoding="utf-8")
    argv = ["task", "run", str(task), "--workspace", str(tmp_path), "--gate-timeout", "0.2"]
    assert main(argv) == 1  # no terminal, no --yes: nobody decides
    out = capsys.readouterr().out
    assert out.count("no decision within the gate's timeout") == 1, out
    assert "Task gated failed: stopped at step 'go_ahead'" in out
    assert main(["runs", "list", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)[0]["run_id"]
    assert main(["runs", "show", run_id]) == 0
    [finished] = [line for line in capsys.readouterr().out.splitlines() if "run_finished" in line]
    assert finished.split("run_finished", 1)[1].strip().startswith("failed: no decision")
