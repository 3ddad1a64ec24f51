"""Ctrl-C (SIGINT) interrupts the run a command started, also when the command was started
with SIGINT ignored, as a shell without job control starts a background command (a script's
`loopwright run ... &`, a CI runner): the run is stored `interrupted` (no `run_finished`),
stderr says how to resume or cancel it, and the command exits 130; `runs resume` goes on with
it, `runs cancel` ends it. A second Ctrl-C while the first is still stopping the run cancels
it. A real process: the signal and its inherited handling are the point.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import cli_env, cli_process

from loopwright.store import SqliteRunStore

pytestmark = pytest.mark.subprocess

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXIT_LIMIT_S = 60
"""Far below the gate's 300 s: a command that ignored the signal would fail the test."""


def _sigint_ignored() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _until_its_gate_waits(
    command: list[str], env: dict[str, str], inherited: str
) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        command, env=env, cwd=env["HOME"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=_sigint_ignored if inherited == "ignored" else None,
    )  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:  # until the gate waits (no terminal: nobody is asked)
        event = json.loads(line)
        if event["type"] == "confirmation_required":
            return proc, str(event["run_id"])
    raise AssertionError(f"no gate: {proc.communicate()}")


def _ctrl_c(proc: subprocess.Popen[str]) -> tuple[str, str, float]:
    try:
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=EXIT_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # reaps it and closes its pipes
    return rest, err, time.monotonic() - started


def _status(home: Path, run_id: str) -> str:
    store = SqliteRunStore(home / "runs.db")
    try:
        record = store.get_run(run_id)
    finally:
        store.close()
    assert record is not None
    return record.status


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_interrupts_a_task_run_waiting_at_its_gate(tmp_path: Path, inherited: str) -> None:
    ws = shutil.copytree(EXAMPLES / "tasks" / "workspace", tmp_path / "ws")
    env = cli_env(tmp_path)
    command = [sys.executable, "-m", "loopwright", "task", "run",
               str(EXAMPLES / "tasks" / "rotate-keys.yaml"), "--workspace", str(ws),
               "--input", "as_of=2025-06-01", "--state-dir", str(tmp_path / "state"), "--json"]  # fmt: skip
    proc, run_id = _until_its_gate_waits(command, env, inherited)
    rest, err, elapsed = _ctrl_c(proc)

    assert proc.returncode == 130, err
    assert elapsed < EXIT_LIMIT_S
    assert "run_finished" not in rest  # not ended: interrupted
    assert _status(tmp_path, run_id) == "interrupted"
    assert f"run {run_id} was interrupted; `loopwright runs resume {run_id}" in err

    cancel = cli_process("runs", "cancel", run_id, home=tmp_path)
    assert (cancel.code, cancel.out.strip()) == (0, f"cancelled run {run_id} (it was interrupted)")
    assert _status(tmp_path, run_id) == "cancelled"
    again = cli_process("runs", "cancel", run_id, home=tmp_path)
    assert again.code == 2
    assert again.err.strip() == (
        f"loopwright: error: run {run_id} already ended (cancelled); nothing to cancel"
    )


def test_ctrl_c_leaves_an_agent_run_to_resume(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        json.dumps({"action": "echo", "action_input": {"text": "one"}}),
        json.dumps({"final_answer": "said one"}),
    ]))  # fmt: skip
    env = cli_env(tmp_path)
    command = [sys.executable, "-m", "loopwright", "run", "say one", "--model",
               f"scripted:{script}", "--tools", "echo", "--approve", "echo", "--json"]  # fmt: skip
    proc, run_id = _until_its_gate_waits(command, env, "default")
    _, err, _ = _ctrl_c(proc)
    assert proc.returncode == 130, err
    assert _status(tmp_path, run_id) == "interrupted"

    resumed = cli_process("runs", "resume", run_id, "--yes", home=tmp_path)
    assert resumed.code == 0, resumed.err
    assert "said one" in resumed.out
    assert _status(tmp_path, run_id) == "completed"


def test_runs_cancel_of_a_run_not_there_is_one_line(tmp_path: Path) -> None:
    missing = cli_process("runs", "cancel", "run_nothere", home=tmp_path)
    assert missing.code == 2
    assert missing.err.startswith("loopwright: error: no run 'run_nothere'")


SLOW_TO_STOP = '''
import asyncio
from pathlib import Path

HERE = Path(__file__).parent


async def wait_here(text: str) -> str:
    """Wait until the run is stopped; then take until the test says to finish stopping.

    Args:
        text: anything
    """
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        (HERE / "stopping").touch()
        while not (HERE / "release").exists():
            await asyncio.sleep(0.02)
        for _ in range(10):  # a few turns of the loop: it takes the signal sent before the
            await asyncio.sleep(0)  # release (asyncio reads a signal on its next turn)
        raise
    return text
'''


def _until(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + EXIT_LIMIT_S
    while not path.exists():  # the tool says it is stopping: the first Ctrl-C was taken
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"no {path.name} in {EXIT_LIMIT_S} s"
        time.sleep(0.02)


def test_a_second_ctrl_c_while_the_run_stops_cancels_it(tmp_path: Path) -> None:
    tools = tmp_path / "slow_tools.py"
    tools.write_text(SLOW_TO_STOP)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        json.dumps({"action": "wait_here", "action_input": {"text": "one"}}),
        json.dumps({"final_answer": "never"}),
    ]))  # fmt: skip
    command = [sys.executable, "-m", "loopwright", "run", "wait", "--model",
               f"scripted:{script}", "--tools", f"{tools}:wait_here", "--json"]  # fmt: skip
    env = cli_env(tmp_path)
    proc = subprocess.Popen(command, env=env, cwd=env["HOME"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        run_id = ""
        for line in proc.stdout:  # until its tool call runs
            event = json.loads(line)
            run_id = str(event["run_id"])
            if event["type"] == "tool_call_started":
                break
        proc.send_signal(signal.SIGINT)
        _until(tmp_path / "stopping", proc)
        proc.send_signal(signal.SIGINT)  # while the first is still stopping the run
        (tmp_path / "release").touch()
        _, err = proc.communicate(timeout=EXIT_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert f"loopwright: run {run_id} was cancelled" in err
    assert "was interrupted" not in err
    assert _status(tmp_path, run_id) == "cancelled"
    resumed = cli_process("runs", "resume", run_id, home=tmp_path)
    assert resumed.code == 2  # cancelled, not interrupted: nothing to go on with
