"""What the live view says: a gate's question and who decided it (agent and task runs, piped
and on a terminal), a stop with what to do next, a resumed run's header and its gate."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from cli_helpers import ANSI, SRC, cli_env

from loopwright.cli import main
from loopwright.cli._shared import reach_flags, waiting_line
from loopwright.events import ConfirmationRequiredEvent, ModelResponseEvent, decode_event
from loopwright.store import SqliteRunStore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
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


def _remove_run(tmp_path: Path, *extra: str) -> list[str]:
    """`loopwright run` whose scripted model removes a file (a destructive call, gated)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "tools.py").write_text(TOOLS)
    replies = [
        {"thought": "remove it", "action": "remove", "action_input": {"path": str(victim)}},
        {"thought": "done", "final_answer": "finished"},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps([json.dumps(r) for r in replies]))
    return ["run", "clean up", "--model", f"scripted:{script}", "--tools",
            f"{tmp_path / 'tools.py'}:remove", "--approve", "destructive", *extra]  # fmt: skip


def test_piped_a_gated_call_shows_its_question_and_its_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "runs.db")
    assert main([*_remove_run(tmp_path, "--approval-timeout", "0.2", "--store", store)]) == 0
    out, err = capsys.readouterr()
    assert '? Allow the agent to call remove {"path": ' in out
    assert "✗ no decision in time: not approved" in out
    assert "→ Calling remove" not in out and "0 tool calls" in out
    assert f"--store {store} [--reject" in err  # the hint can be pasted in another shell
    assert main([*_remove_run(tmp_path, "--yes", "--store", store)]) == 0
    out = capsys.readouterr().out
    assert "✓ approved by --yes" in out and "← Observing: removed" in out


def test_the_decide_hint_names_the_store_and_the_temporal_frontend() -> None:
    args = argparse.Namespace(store="postgresql://app:s3cret@db/runs", temporal="tmp:7233")
    gate = ConfirmationRequiredEvent(
        run_id="run_1", seq=4, ts=0.0, step="remove", request_id="g1", message="ok?",
        timeout_s=60.0,
    )  # fmt: skip
    line = waiting_line(gate, "runs approve", reach_flags(args))
    # the command works as pasted: no password, and no `***` that could not log in
    assert "`loopwright runs approve run_1 g1 --store postgresql://app@db/runs " in line
    assert "--temporal tmp:7233 [--reject" in line and "s3cret" not in line and "***" not in line
    assert reach_flags(argparse.Namespace(store=None)) == ""


def test_the_decide_hint_names_a_store_from_the_environment_by_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "postgresql://app:s3cret@db/runs"
    monkeypatch.setenv("LOOPWRIGHT_STORE", url)
    assert reach_flags(argparse.Namespace(store=url)) == ' --store "$LOOPWRIGHT_STORE"'
    masked_query = "postgresql://app@db/runs?password=s3cret&sslmode=require"
    flags = reach_flags(argparse.Namespace(store=masked_query))
    assert flags == " --store 'postgresql://app@db/runs?sslmode=require'"


def test_a_stop_says_stopped_once_and_what_to_do_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "runs.db")
    argv = _remove_run(tmp_path, "--yes", "--max-iterations", "1", "--no-last-turn")
    assert main([*argv, "--store", store]) == 1
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if line.startswith("■")]
    assert line.startswith("■ Stopped (max_iterations): ") and line.count("Stopped") == 1
    [run] = SqliteRunStore(store).list_runs()
    assert (
        f"next: raise --max-iterations (or --tier complex), or carry on: loopwright run "
        f"--continue {run.run_id} --store {store}"
    ) in out


def _interrupted_at_its_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A run whose process died while its gate waited (its events up to the question)."""
    scratch = str(tmp_path / "scratch.db")
    main([*_remove_run(tmp_path, "--approval-timeout", "1", "--json", "--store", scratch)])
    events = [decode_event(line) for line in capsys.readouterr().out.splitlines()]
    asked = next(e for e in events if isinstance(e, ConfirmationRequiredEvent))
    SqliteRunStore(tmp_path / "runs.db").append_many(events[: asked.seq])
    (tmp_path / "victim.txt").write_text("precious")
    return asked.run_id


def test_a_resumed_run_has_a_header_its_tokens_and_its_gate_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _interrupted_at_its_gate(tmp_path, capsys)
    store = str(tmp_path / "runs.db")
    so_far = sum(
        e.response["usage"]["input_tokens"] + e.response["usage"]["output_tokens"]
        for e in SqliteRunStore(store).events(run_id)
        if isinstance(e, ModelResponseEvent)
    )
    assert so_far > 0
    assert main(["runs", "resume", run_id, "--yes", "--store", store]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"↻ Resuming run {run_id}: clean up"
    assert f"4 events recorded · {so_far} tokens so far" in lines[1]
    assert lines[2].startswith("? Allow the agent to call remove")
    assert lines[3].strip() == "✓ approved by --yes"
    assert "← Observing: removed" in "\n".join(lines) and not (tmp_path / "victim.txt").exists()
    assert lines[-1].startswith("completed · 1 tool call · ")


def test_a_resumed_run_waiting_at_its_gate_says_how_to_decide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _interrupted_at_its_gate(tmp_path, capsys)
    store = str(tmp_path / "runs.db")
    assert main(["runs", "resume", run_id[:9], "--store", store]) == 0  # 1 s, then not run
    out, err = capsys.readouterr()
    assert "? Allow the agent to call remove" in out and "✗ no decision in time" in out
    assert f"`loopwright runs approve {run_id} approve_" in err and f"--store {store}" in err
    assert (tmp_path / "victim.txt").exists()


def _on_a_terminal(argv: list[str], env: dict[str, str], answer: str) -> str:
    """`loopwright ARGV` on a pseudo-terminal; `answer` typed at the first prompt."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "loopwright", *argv], stdin=slave, stdout=slave, stderr=slave,
        env={**env, "TERM": "xterm-256color", "COLUMNS": "120"}, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    raw, sent, deadline = b"", False, time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            raw += data
            if not sent and b"[y/N/reason to refuse]" in raw:
                os.write(master, answer.encode() + b"\n")
                sent = True
        process.wait(timeout=30)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    return ANSI.sub("", raw.decode("utf-8", "replace")).replace("\r\n", "\n")


@pytest.mark.subprocess
def test_a_task_gate_on_a_terminal_asks_once_and_says_what_ran(tmp_path: Path) -> None:
    ws = shutil.copytree(EXAMPLES / "tasks" / "workspace", tmp_path / "ws")
    env = cli_env(tmp_path, PYTHONPATH=str(SRC))
    argv = ["task", "run", str(EXAMPLES / "tasks" / "rotate-keys.yaml"), "--workspace", str(ws),
            "--input", "as_of=2025-06-01", "--state-dir", str(tmp_path / "state")]  # fmt: skip
    out = _on_a_terminal(argv, env, "n")
    assert out.count("Rotate 2 stale key(s) in staging?") == 1  # the prompt is the question
    assert out.count("rejected by terminal") == 2  # the decision, then the task's summary
    assert "✗ rejected by terminal" in out and "rejected rejected" not in out
    assert "Task rotate-keys cancelled: step 'approve' was rejected by terminal" in out
    assert "Final Answer" not in out
    assert "cancelled · 2 tool calls run" in out and "(cancelled)" not in out
    assert "pre-task hook: workspace (tool)" in out and "Step 1/4: list_keys (tool)" in out
    assert 'list_keys → {"env": "staging", "count": 3' in out  # JSON, not a Python repr
    assert "model  ·" not in out


def test_a_sub_agent_counts_its_own_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "How tall is Mont Blanc?", "--store", str(tmp_path / "runs.db"),
                 "--model", f"scripted:{EXAMPLES / 'subagents_lead.json'}",
                 "--tools", f"{EXAMPLES / 'subagents.py'}:research"])  # fmt: skip
    assert code == 0
    nested = [line for line in capsys.readouterr().out.splitlines() if "│ Iteration 1/" in line]
    assert nested and "0 tokens" in nested[0]  # not its lead's 33
