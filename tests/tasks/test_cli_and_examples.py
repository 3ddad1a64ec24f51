"""`loopwright task ...` on the example tasks, in a copy of their workspace."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.cli import main

EXAMPLES = Path(__file__).parents[2] / "examples" / "tasks"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLES / "workspace", tmp_path / "ws"))


def state_files(state: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(p.read_text()) for p in sorted(state.rglob("task-runs/*.json"))]


def events_of(out: str) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_validate_reports_ok_and_errors_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nsteps:\n  - name: a\n    type: teleport\n")
    code = main(["task", "validate", str(EXAMPLES / "rotate-keys.yaml"), str(bad)])
    captured = capsys.readouterr()
    assert code == 2
    assert "task 'rotate-keys', 4 steps, hooks: pre-task, post-task" in captured.out
    assert f"{bad}:4: step 'a': unknown step type 'teleport'" in captured.err


def test_rotate_keys_example_runs_and_rolls_back(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = (ws / "keys.json").read_bytes()
    state = tmp_path / "state"
    args = ["task", "run", str(EXAMPLES / "rotate-keys.yaml"), "--workspace", str(ws)]
    args += ["--input", "as_of=2025-06-01", "--client", "acme", "--yes", "--json"]
    assert main([*args, "--state-dir", str(state)]) == 0
    events = events_of(capsys.readouterr().out)
    assert events[0]["type"] == "run_started" and events[-1]["status"] == "completed"
    keys = json.loads((ws / "keys.json").read_text())["staging"]
    assert {k["created"] for k in keys} == {"2025-06-01", "2025-05-20"}
    [saved] = state_files(state)
    assert saved["client_name"] == "acme" and saved["status"] == "completed"
    assert saved["change_log"][0]["step"] == "rotate"
    assert main(["task", "rollback", saved["task_id"], "--state-dir", str(state), "--json"]) == 0
    assert (ws / "keys.json").read_bytes() == original
    assert state_files(state)[0]["status"] == "rolled_back"
    assert main(["task", "rollback", saved["task_id"], "--state-dir", str(state)]) == 1


def test_release_notes_example_runs_its_agent_step(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = EXAMPLES / "release-notes.script.json"
    code = main(
        [
            "task",
            "run",
            str(EXAMPLES / "release-notes.md"),
            "--workspace",
            str(ws),
            "--input",
            "version=1.4.0",
            "--model",
            f"scripted:{script}",
            "--yes",
            "--json",
            "--state-dir",
            str(tmp_path / "state"),
        ]
    )
    assert code == 0
    notes = (ws / "RELEASE_NOTES.md").read_text()
    assert notes.startswith("## 1.4.0") and "Task runner with approval gates" in notes
    events = events_of(capsys.readouterr().out)
    assert any(e["type"] == "stream" and "1.4.0" in e["chunk"] for e in events)


def test_match_chooses_the_task_and_explains(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "task",
            "run",
            str(EXAMPLES),
            "--match",
            "rotate the staging keys",
            "--yes",
            "--workspace",
            str(ws),
            "--input",
            "as_of=2025-06-01",
            "--json",
            "--state-dir",
            str(tmp_path / "state"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert "chose task 'rotate-keys': the request mentions 'rotate', 'keys'" in captured.err
    assert events_of(captured.out)[0]["request"] == "rotate the staging keys"
    assert main(["task", "run", str(EXAMPLES), "--match", "bake bread"]) == 2
    assert "no task matches 'bake bread'" in capsys.readouterr().err


def test_no_terminal_and_no_yes_waits_then_times_out(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code = main(
        [
            "task",
            "run",
            str(EXAMPLES / "rotate-keys.yaml"),
            "--workspace",
            str(ws),
            "--input",
            "as_of=2025-06-01",
            "--gate-timeout",
            "0.05",
            "--json",
            "--state-dir",
            str(tmp_path / "state"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert "waits for approval from `loopwright serve`" in captured.err
    assert "loopwright task approve" in captured.err and "until 20" in captured.err
    assert events_of(captured.out)[-1]["status"] == "failed"
    assert json.loads((ws / "keys.json").read_text())["staging"][0]["created"] == "2024-11-02"


def test_missing_input_is_a_usage_error(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["task", "run", str(EXAMPLES / "rotate-keys.yaml"), "--workspace", str(ws)]) == 2
    assert "needs input(s) as_of" in capsys.readouterr().err


@pytest.mark.subprocess
def test_the_task_resume_example_runs() -> None:
    example = Path(__file__).parents[2] / "examples" / "tasks" / "resume_task.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "while its gate waited; the store says: interrupted" in out
    assert "waits again" in out and "resumed: completed" in out
    assert out.count("step first:") == 1  # served from the log, not run again
    assert "gate of approve: approved by alice" in out
    assert "notes.txt: one, two" in out


def test_the_look_example_lists_its_workspace(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    look = EXAMPLES.parent / "look_task.yaml"
    args = ["task", "run", str(look), "--workspace", str(ws), "--json"]
    assert main([*args, "--state-dir", str(tmp_path / "state")]) == 0
    events = events_of(capsys.readouterr().out)
    [step] = [e for e in events if e["type"] == "step_complete"]
    assert step["result"] == ["commits.txt", "keys.json"] and events[-1]["status"] == "completed"
