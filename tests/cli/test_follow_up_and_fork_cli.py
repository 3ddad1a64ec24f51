"""`loopwright run --after RUN_ID` (a follow-up turn) and `loopwright runs fork RUN_ID --at
STEP`, through the real CLI as a program: the new run is linked, takes the earlier run's
spec, and is refused with one line (exit 2, nothing started) for a run still running,
another tenant's, missing, or a step past the last."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli_env, cli_process

from loopwright.events import RunStartedEvent, ToolCallEvent
from loopwright.store import RunRecord, SqliteRunStore

pytestmark = pytest.mark.subprocess


def _script(path: Path, *words: str) -> str:
    replies: list[str] = []
    for word in words:
        replies.append(json.dumps({"action": "echo", "action_input": {"text": word}}))
    replies.append(json.dumps({"final_answer": "said " + " and ".join(words)}))
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def _runs(home: Path) -> list[RunRecord]:
    store = SqliteRunStore(home / "runs.db")
    try:
        return sorted(store.list_runs(), key=lambda r: r.created_at)
    finally:
        store.close()


def _events(home: Path, run_id: str) -> list[object]:
    store = SqliteRunStore(home / "runs.db")
    try:
        return list(store.events(run_id))
    finally:
        store.close()


def _first_run(home: Path, *words: str, tenant: str = "default") -> RunRecord:
    done = cli_process("run", "say it", "--model", _script(home / "first.json", *words),
                       "--tools", "echo", "--tenant", tenant, home=home)  # fmt: skip
    assert done.code == 0, done.err
    return _runs(home)[-1]


def test_a_follow_up_turn_continues_the_conversation(tmp_path: Path) -> None:
    before = _first_run(tmp_path, "one")
    model = _script(tmp_path / "second.json", "two")
    done = cli_process("run", "--after", before.run_id[:12], "now two", "--model", model,
                       home=tmp_path)  # fmt: skip
    assert done.code == 0, done.err
    _, turn = _runs(tmp_path)
    assert (turn.after_run_id, turn.answer) == (before.run_id, "said two")
    started, *rest = _events(tmp_path, turn.run_id)
    assert isinstance(started, RunStartedEvent) and started.after_run_id == before.run_id
    # the earlier turn's tools (not given again): echo ran
    calls = [e for e in rest if isinstance(e, ToolCallEvent)]
    assert [(c.tool_name, c.is_error) for c in calls] == [("echo", False)]


@pytest.mark.parametrize("whose", ["missing", "another tenant's"])
def test_a_follow_up_of_a_run_not_there_is_one_line(tmp_path: Path, whose: str) -> None:
    run_id = "run_0123456789abcdef"
    if whose != "missing":
        run_id = _first_run(tmp_path, "one", tenant="acme").run_id
    done = cli_process("run", "--after", run_id, "more", "--model", "scripted:x.json",
                       home=tmp_path)  # fmt: skip
    assert done.code == 2
    [line] = done.err.strip().splitlines()
    assert line.startswith(f"loopwright: error: no run '{run_id}'"), line
    assert len(_runs(tmp_path)) == (0 if whose == "missing" else 1)


def test_a_follow_up_of_a_run_still_running_is_one_line(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    script = _script(tmp_path / "first.json", "one")
    waiting = subprocess.Popen(
        [sys.executable, "-m", "loopwright", "run", "say one", "--model", script, "--tools",
         "echo", "--approve", "echo", "--json"],
        env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert waiting.stdout is not None
    try:
        for line in waiting.stdout:  # until its gate waits: the run is running
            event = json.loads(line)
            if event["type"] == "confirmation_required":
                break
        done = cli_process("run", "--after", event["run_id"], "more", "--model",
                           "scripted:x.json", home=tmp_path)  # fmt: skip
    finally:
        waiting.send_signal(signal.SIGINT)
        waiting.communicate(timeout=60)
    assert done.code == 2
    [line] = done.err.strip().splitlines()
    assert line == (
        f"loopwright: error: run {event['run_id']} is still running: follow it up once it has "
        f"ended (`loopwright runs follow {event['run_id']}` waits for its end)"
    )
    assert len(_runs(tmp_path)) == 1


def test_after_and_continue_together_are_refused(tmp_path: Path) -> None:
    done = cli_process("run", "--after", "run_a", "--continue", "run_b", "x", home=tmp_path)
    assert done.code == 2
    assert "--after and --continue" in done.err


def test_fork_takes_the_first_steps_from_the_log_then_runs_live(tmp_path: Path) -> None:
    before = _first_run(tmp_path, "one", "two")
    model = _script(tmp_path / "fork.json", "three")
    done = cli_process("runs", "fork", before.run_id, "--at", "1", "--model", model,
                       "--request", "say one, then three", home=tmp_path)  # fmt: skip
    assert done.code == 0, done.err
    _, fork = _runs(tmp_path)
    assert fork.answer == "said three"
    started, *rest = _events(tmp_path, fork.run_id)
    assert isinstance(started, RunStartedEvent)
    assert started.fork_of == {"run_id": before.run_id, "step": 1}
    assert started.request == "say one, then three"
    said = [e.result for e in rest if isinstance(e, ToolCallEvent)]
    assert said == ["one", "three"]  # step 1 served from the log, then live


def test_a_fork_past_the_last_step_is_one_line(tmp_path: Path) -> None:
    before = _first_run(tmp_path, "one")
    done = cli_process("runs", "fork", before.run_id, "--at", "7", home=tmp_path)
    assert done.code == 2
    [line] = done.err.strip().splitlines()
    assert line == (
        f"loopwright: error: cannot fork run {before.run_id} at step 7: it has 2 step(s), "
        "fork at 0 to 2"
    )
    assert len(_runs(tmp_path)) == 1
