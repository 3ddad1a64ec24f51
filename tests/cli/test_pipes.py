"""A closed stdout (`loopwright ... | head`) ends the command at once, without a traceback;
a run the command started is cancelled and stored `cancelled`, and stderr says so. These
need real pipes: each test starts the command as a program and closes its stdout early."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli_env

from loopwright.events import RunStartedEvent, ToolCallEvent
from loopwright.store import SqliteRunStore

pytestmark = pytest.mark.subprocess

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXIT_LIMIT_S = 60
"""Far below the gate's 300 s: a command that waited for it would fail the test."""


def _head(argv: list[str], env: dict[str, str], lines: int) -> tuple[list[str], int, str]:
    """`loopwright ARGV | head -LINES`: the lines read, the command's exit code, its stderr."""
    with subprocess.Popen(
        [sys.executable, "-m", "loopwright", *argv], env=env, cwd=env["HOME"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as process:  # fmt: skip
        assert process.stdout is not None and process.stderr is not None
        read = [process.stdout.readline() for _ in range(lines)]
        process.stdout.close()  # what `head` does when it has its lines
        try:
            code = process.wait(timeout=EXIT_LIMIT_S)
        finally:
            if process.poll() is None:
                process.kill()
        return read, code, process.stderr.read()


def _rotate_keys(tmp_path: Path, *extra: str) -> list[str]:
    ws = shutil.copytree(EXAMPLES / "tasks" / "workspace", tmp_path / "ws")
    return ["task", "run", str(EXAMPLES / "tasks" / "rotate-keys.yaml"), "--workspace", str(ws),
            "--input", "as_of=2025-06-01", "--state-dir", str(tmp_path / "state"), *extra]  # fmt: skip


def _only_run(tmp_path: Path) -> tuple[str, str]:
    [run] = SqliteRunStore(tmp_path / "runs.db").list_runs()
    return run.run_id, run.status


def test_task_run_into_head_is_cancelled_and_says_so(tmp_path: Path) -> None:
    read, code, err = _head(_rotate_keys(tmp_path), cli_env(tmp_path), 3)
    assert read[0].startswith("▶ rotate-keys")
    run_id, status = _only_run(tmp_path)
    assert code == 1 and status == "cancelled"
    assert f"stdout was closed: run {run_id} was cancelled (stored cancelled)" in err
    # the line to see its events can be pasted: it names the store the run is in
    assert f"`loopwright runs show {run_id} --store {tmp_path / 'runs.db'}` shows" in err
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_json_into_head_while_a_gate_waits_ends_at_once(tmp_path: Path) -> None:
    """The run goes quiet at its gate (300 s): the closed pipe is noticed all the same."""
    read, code, err = _head(_rotate_keys(tmp_path, "--json"), cli_env(tmp_path), 12)
    types = [json.loads(line)["type"] for line in read]
    assert "confirmation_required" in types  # head had all it wanted while the gate waited
    assert code == 1 and _only_run(tmp_path)[1] == "cancelled"
    assert "stdout was closed" in err and "Traceback" not in err


def test_runs_show_json_into_head_prints_no_traceback(tmp_path: Path) -> None:
    """More than a pipe holds, so the writes after `head` left fail."""
    store = SqliteRunStore(tmp_path / "runs.db")
    started = RunStartedEvent(run_id="run_big", seq=1, ts=1.0, kind="agent", request="big",
                              model="m", tools=[], options={}, tenant="default")  # fmt: skip
    call = ToolCallEvent(run_id="run_big", call_id="c", tool_name="t", arguments={},
                         args_summary="", result="x" * 2000, result_summary="x",
                         is_error=False, duration_ms=1.0, iteration_number=1)  # fmt: skip
    calls = [dataclasses.replace(call, seq=seq, ts=float(seq)) for seq in range(2, 400)]
    store.append_many([started, *calls])
    store.close()
    read, code, err = _head(["runs", "show", "run_big", "--json"], cli_env(tmp_path), 1)
    assert json.loads(read[0])["type"] == "run_started"
    assert code == 1 and err == ""
