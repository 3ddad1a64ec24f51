"""One lifecycle: a run's gate decided from the command line, over HTTP or from Python goes
through the same Runtime operation and reaches the waiting run the same way, recorded with
who decided; `loopwright runs follow` in a second process shows a live run to its end."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from cli_helpers import cli, cli_env
from server_helpers import live_server, make_config

from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore

pytestmark = pytest.mark.subprocess  # runs in a process of their own, approved from this one

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
REASON = "keep it, it is the only copy"


class WaitingRun:
    """A `loopwright run` in its own process whose tool call waits for approval (no
    terminal, no --yes: only another process can decide it)."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path
        self.victim = tmp_path / "victim.txt"
        self.victim.write_text("precious")
        (tmp_path / "tools.py").write_text(TOOLS)
        replies = [
            {
                "thought": "remove it",
                "action": "remove",
                "action_input": {"path": str(self.victim)},
            },
            {"thought": "done", "final_answer": "finished"},
        ]
        (tmp_path / "script.json").write_text(json.dumps([json.dumps(r) for r in replies]))
        command = [sys.executable, "-m", "loopwright", "run", "clean up",
                   "--model", f"scripted:{tmp_path / 'script.json'}",
                   "--tools", f"{tmp_path / 'tools.py'}:remove", "--approve", "remove", "--json"]  # fmt: skip
        self.process = subprocess.Popen(
            command, cwd=tmp_path, env=cli_env(tmp_path), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        self.gate = self._waiting_gate()

    def _waiting_gate(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + WAIT_LIMIT_S
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            assert line, f"the run ended before asking: {self.process.stderr}"
            event = json.loads(line)
            if event["type"] == "confirmation_required":
                return dict(event)
        raise AssertionError("the run never asked for approval")

    @property
    def run_id(self) -> str:
        return str(self.gate["run_id"])

    def finish(self) -> tuple[int, str]:
        _, err = self.process.communicate(timeout=WAIT_LIMIT_S)
        return self.process.returncode, err

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def waiting_run(tmp_path: Path) -> Iterator[WaitingRun]:
    run = WaitingRun(tmp_path)
    try:
        yield run
    finally:
        run.stop()


def decide_with_the_cli(run: WaitingRun) -> tuple[str, str]:
    done = cli("runs", "approve", run.run_id, "--reject", "--reason", REASON, "--by", "ops:ana",
               home=run.home)  # fmt: skip
    assert done.code == 0, done.err
    assert "left in the store for its process" in done.out
    return "ops:ana", "store"


def decide_over_http(run: WaitingRun) -> tuple[str, str]:
    store = SqliteRunStore(run.home / "runs.db")
    config = make_config(run.home, tokens={"s3cret-token-1": "default"}, store=store)
    with live_server(config) as server:
        response = httpx.post(
            f"{server.url}/api/runs/{run.run_id}/gates/{run.gate['request_id']}",
            json={"approve": False, "reason": REASON},
            headers={"Authorization": "Bearer s3cret-token-1"},
        )
    assert response.status_code == 202, response.text
    return "api:default", response.json()["delivered"]


def decide_from_python(run: WaitingRun) -> tuple[str, str]:
    async def decide() -> str:
        runtime = Runtime(SqliteRunStore(run.home / "runs.db"))
        try:
            decided = await runtime.approve(run.run_id, None, False, "script:nightly", REASON)
            return decided.delivered
        finally:
            runtime.close()

    return "script:nightly", asyncio.run(decide())


@pytest.mark.parametrize("decide", [decide_with_the_cli, decide_over_http, decide_from_python])
def test_a_decision_from_anywhere_reaches_the_waiting_run_the_same_way(
    waiting_run: WaitingRun, decide: Any
) -> None:
    decided_by, delivered = decide(waiting_run)
    code, err = waiting_run.finish()
    assert delivered == "store"  # the run executes in another process: through the store
    assert code == 0, err
    assert waiting_run.victim.read_text() == "precious"  # the refused call never ran
    shown = cli("runs", "show", waiting_run.run_id, "--json", home=waiting_run.home)
    events = [json.loads(line) for line in shown.out.splitlines()]
    [verdict] = [e for e in events if e["type"] == "gate_decision"]
    assert (verdict["approved"], verdict["decided_by"], verdict["reason"]) == (
        False, decided_by, REASON,
    )  # fmt: skip
    assert not [e for e in events if e["type"] == "tool_call"]
    assert events[-1]["type"] == "run_finished" and events[-1]["status"] == "completed"


def test_runs_follow_in_a_second_process_shows_the_live_run_to_its_end(
    waiting_run: WaitingRun,
) -> None:
    follow = subprocess.Popen(
        [sys.executable, "-m", "loopwright", "runs", "follow", waiting_run.run_id, "--json"],
        cwd=waiting_run.home, env=cli_env(waiting_run.home), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert follow.stdout is not None
        seen: list[dict[str, Any]] = []
        while not seen or seen[-1]["type"] != "confirmation_required":
            line = follow.stdout.readline()
            assert line, follow.communicate()[1]
            seen.append(json.loads(line))
        assert waiting_run.process.poll() is None  # what it showed so far, it showed live
        done = cli("runs", "approve", waiting_run.run_id, home=waiting_run.home)
        assert done.code == 0, done.err
        out, err = follow.communicate(timeout=WAIT_LIMIT_S)
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.wait()
    assert follow.returncode == 0, err  # it ended, completed
    seen += [json.loads(line) for line in out.splitlines()]
    assert waiting_run.finish()[0] == 0
    assert not waiting_run.victim.exists()  # approved: the call ran once
    shown = cli("runs", "show", waiting_run.run_id, "--json", home=waiting_run.home)
    stored = [json.loads(line) for line in shown.out.splitlines()]
    assert seen == stored  # every event once, in order, to run_finished
    assert seen[-1]["type"] == "run_finished" and seen[-1]["status"] == "completed"
