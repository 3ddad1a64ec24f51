"""Ctrl-C (SIGINT) cancels the run a command started, also when the command was started
with SIGINT ignored, as a shell without job control starts a background command (a script's
`loopwright run ... &`, a CI runner): the run is stored `cancelled`, its end is shown and
the command exits 130. A real process: the signal and its inherited handling are the point."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import cli_env

from loopwright.store import SqliteRunStore

pytestmark = pytest.mark.subprocess

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXIT_LIMIT_S = 60
"""Far below the gate's 300 s: a command that ignored the signal would fail the test."""


def _sigint_ignored() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_cancels_a_task_run_waiting_at_its_gate(tmp_path: Path, inherited: str) -> None:
    ws = shutil.copytree(EXAMPLES / "tasks" / "workspace", tmp_path / "ws")
    env = cli_env(tmp_path)
    command = [sys.executable, "-m", "loopwright", "task", "run",
               str(EXAMPLES / "tasks" / "rotate-keys.yaml"), "--workspace", str(ws),
               "--input", "as_of=2025-06-01", "--state-dir", str(tmp_path / "state"), "--json"]  # fmt: skip
    proc = subprocess.Popen(
        command, env=env, cwd=env["HOME"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=_sigint_ignored if inherited == "ignored" else None,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        for line in proc.stdout:  # until the gate waits (no terminal: nobody is asked)
            if json.loads(line)["type"] == "confirmation_required":
                break
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=EXIT_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # reaps it and closes its pipes
    elapsed = time.monotonic() - started

    assert proc.returncode == 130, err
    assert elapsed < EXIT_LIMIT_S
    last = json.loads(rest.splitlines()[-1])
    assert (last["type"], last["status"]) == ("run_finished", "cancelled")
    [run] = SqliteRunStore(tmp_path / "runs.db").list_runs()
    assert run.status == "cancelled"
