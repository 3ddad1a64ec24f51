"""Approvals through the real command: `loopwright run --approve ... --yes`, and a run that
waits while `loopwright runs approve RUN_ID --reject --reason ...` decides from another
process through the store."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_helpers import cli, cli_env

TOOLS = '''
from pathlib import Path
from loopwright import tool

@tool(effect="destructive")
def remove(path: str) -> str:
    """Remove a file.

    Args:
        path: the file
    """
    Path(path).unlink()
    return f"removed {path}"
'''
WAIT_LIMIT_S = 60


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    tools = tmp_path / "tools.py"
    tools.write_text(TOOLS)
    script = tmp_path / "script.json"
    replies = [
        {"thought": "remove it", "action": "remove", "action_input": {"path": str(victim)}},
        {"thought": "done", "final_answer": "finished"},
    ]
    script.write_text(json.dumps([json.dumps(r) for r in replies]))
    return victim, tools, script


def _events(tmp_path: Path, run_id: str) -> list[dict[str, object]]:
    shown = cli("runs", "show", run_id, "--json", home=tmp_path)
    return [json.loads(line) for line in shown.out.splitlines()]


def test_yes_approves_the_call(tmp_path: Path) -> None:
    victim, tools, script = _setup(tmp_path)
    run = cli("run", "clean", "--model", f"scripted:{script}", "--tools", f"{tools}:remove",
              "--approve", "destructive", "--yes", "--json", home=tmp_path)  # fmt: skip
    assert run.code == 0, run.err
    assert not victim.exists()
    events = [json.loads(line) for line in run.out.splitlines()]
    [decided] = [e for e in events if e["type"] == "gate_decision"]
    assert decided["approved"] is True and decided["decided_by"] == "--yes"


@pytest.mark.subprocess
def test_runs_approve_rejects_from_another_process(tmp_path: Path) -> None:
    victim, tools, script = _setup(tmp_path)
    command = [sys.executable, "-m", "loopwright", "run", "clean", "--model", f"scripted:{script}",
               "--tools", f"{tools}:remove", "--approve", "remove", "--json"]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=tmp_path, env=cli_env(tmp_path), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        gate = None
        deadline = time.monotonic() + WAIT_LIMIT_S
        while gate is None and time.monotonic() < deadline:
            event = json.loads(process.stdout.readline())
            if event["type"] == "confirmation_required":
                gate = event
        assert gate is not None, "the run never asked for approval"
        decided = cli("runs", "approve", gate["run_id"], "--reject", "--reason", "keep it",
                      "--by", "reviewer", home=tmp_path)  # fmt: skip
        assert decided.code == 0, decided.err
        assert f"rejected gate {gate['request_id']}" in decided.out
        _out, err = process.communicate(timeout=WAIT_LIMIT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert victim.exists()
    events = _events(tmp_path, str(gate["run_id"]))
    [verdict] = [e for e in events if e["type"] == "gate_decision"]
    assert (verdict["approved"], verdict["decided_by"], verdict["reason"]) == (
        False, "reviewer", "keep it",
    )  # fmt: skip
    again = cli("runs", "approve", gate["run_id"], home=tmp_path)
    assert again.code != 0 and "no gate waiting" in again.err
