"""A task gate waits in one process and is decided from another, through the run store.

`loopwright task run` runs as a real subprocess with no terminal (stdin is /dev/null) and
no `--yes`; the decision comes from a server on the same SQLite file (over real HTTP) or
from `loopwright task approve`. Every wait is on a condition: the subprocess's `--json`
lines, or the server's answers, each with a deadline.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from server_helpers import (
    ACME,
    GLOBEX,
    TOKENS,
    LiveServer,
    live_server,
    make_config,
    start_run,
    tasks_folder,
    wait_finished,
    ws_connect,
    ws_events,
)

from loopwright.cli import main
from loopwright.store import SqliteRunStore, open_store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "tasks"
DEADLINE_S = 60.0


class TaskProcess:
    """`loopwright task run examples/tasks/rotate-keys.yaml --json` as a subprocess, its
    stdout lines read by a thread so that every wait has a deadline."""

    def __init__(self, tmp_path: Path, store: Path, *extra: str) -> None:
        self.workspace = Path(shutil.copytree(EXAMPLES / "workspace", tmp_path / "task-ws"))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "loopwright", "task", "run", str(EXAMPLES / "rotate-keys.yaml"),
             "--workspace", str(self.workspace), "--input", "as_of=2025-06-01",
             "--client", "acme", "--json", "--store", str(store),
             "--state-dir", str(tmp_path / "state"), *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.events: list[dict[str, Any]] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def until(self, event_type: str) -> dict[str, Any]:
        """Read events until one of `event_type` (the stdout's end fails the test)."""
        while True:
            try:
                line = self._lines.get(timeout=DEADLINE_S)
            except queue.Empty:
                pytest.fail(f"no {event_type} within {DEADLINE_S:g}s; saw {self.types()}")
            if line is None:
                pytest.fail(f"the task run ended before {event_type}: {self.stderr()}")
            if line.startswith("{"):
                event: dict[str, Any] = json.loads(line)
                self.events.append(event)
                if event["type"] == event_type:
                    return event

    def finish(self) -> int:
        """Read to run_finished; the exit code."""
        self.until("run_finished")
        return self.process.wait(timeout=DEADLINE_S)

    def types(self) -> list[str]:
        return [str(e["type"]) for e in self.events]

    def stderr(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        assert self.process.stderr is not None
        return self.process.stderr.read()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=DEADLINE_S)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()

    def keys_created(self) -> set[str]:
        keys = json.loads((self.workspace / "keys.json").read_text())["staging"]
        return {str(k["created"]) for k in keys}

    def keys_untouched(self) -> bool:
        original = (EXAMPLES / "workspace" / "keys.json").read_bytes()
        return (self.workspace / "keys.json").read_bytes() == original


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


@pytest.fixture
def task(tmp_path: Path, store_file: Path) -> Iterator[TaskProcess]:
    """The rotate-keys task waiting at its `approve` gate in another process."""
    process = TaskProcess(tmp_path, store_file, "--gate-timeout", "120")
    try:
        process.until("confirmation_required")
        yield process
    finally:
        process.stop()


@pytest.fixture
def server(tmp_path: Path, store_file: Path) -> Iterator[LiveServer]:
    """A server with tokens on the same store file, which does not run the task."""
    with live_server(make_config(tmp_path, tokens=TOKENS, store=open_store(store_file))) as live:
        yield live


def gate_of(task: TaskProcess) -> tuple[str, str]:
    gate = next(e for e in task.events if e["type"] == "confirmation_required")
    return str(gate["run_id"]), str(gate["request_id"])


@pytest.mark.subprocess
def test_the_server_approves_a_gate_waiting_in_another_process(
    task: TaskProcess, server: LiveServer
) -> None:
    run_id, gate_id = gate_of(task)
    url = f"{server.url}/api/runs/{run_id}/gates/{gate_id}"
    run = httpx.get(f"{server.url}/api/runs/{run_id}", headers=ACME).json()
    assert run["status"] == "running" and run["live"] is False  # live elsewhere
    assert [g["request_id"] for g in run["pending_gates"]] == [gate_id]
    assert httpx.post(url, json={"approve": True}, headers=GLOBEX).status_code == 404

    response = httpx.post(url, json={"approve": True}, headers=ACME)
    assert response.status_code == 202, response.text
    assert response.json() == {
        "run_id": run_id,
        "request_id": gate_id,
        "approved": True,
        "delivered": "store",
    }
    schema = httpx.get(f"{server.url}/api/openapi.json", headers=ACME).json()
    accepted = schema["paths"]["/api/runs/{run_id}/gates/{gate_id}"]["post"]["responses"]["202"]
    jsonschema.Draft202012Validator(
        {**schema, **accepted["content"]["application/json"]["schema"]}
    ).validate(response.json())
    again = httpx.post(url, json={"approve": False}, headers=ACME)
    assert again.status_code == 409  # the first decision wins (or the gate is gone)

    assert task.finish() == 0
    decision = next(e for e in task.events if e["type"] == "gate_decision")
    assert decision["request_id"] == gate_id
    assert decision["approved"] is True and decision["decided_by"] == "api:acme"
    assert task.events[-1]["status"] == "completed"
    assert task.keys_created() == {"2025-06-01", "2025-05-20"}  # rotated
    stderr = task.stderr()
    assert f"gate {gate_id} (approve) waits for approval from `loopwright serve`" in stderr
    assert f"loopwright task approve {run_id}" in stderr
    assert httpx.post(url, json={"approve": True}, headers=ACME).status_code == 409


@pytest.mark.subprocess
def test_a_websocket_confirm_reaches_a_gate_waiting_in_another_process(
    task: TaskProcess, server: LiveServer
) -> None:
    run_id, gate_id = gate_of(task)
    with ws_connect(server, run_id, token="acme-token-1234") as ws:
        ws.send(json.dumps({"type": "confirm", "request_id": gate_id, "approve": True}))
        seen: list[dict[str, Any]] = []
        while not seen or seen[-1]["type"] != "run_finished":
            seen.append(json.loads(ws.recv(timeout=DEADLINE_S)))
    decision = next(e for e in seen if e["type"] == "gate_decision")
    assert decision["decided_by"] == "ws:acme" and seen[-1]["status"] == "completed"
    assert task.finish() == 0


@pytest.mark.subprocess
def test_loopwright_task_approve_decides_it_through_the_store(
    task: TaskProcess, store_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id, gate_id = gate_of(task)
    assert main(["task", "approve", run_id, "--store", str(store_file), "--by", "ops:ana"]) == 0
    assert f"approved gate {gate_id} of run {run_id}" in capsys.readouterr().out
    assert task.finish() == 0
    decision = next(e for e in task.events if e["type"] == "gate_decision")
    assert decision["approved"] is True and decision["decided_by"] == "ops:ana"
    assert task.keys_created() == {"2025-06-01", "2025-05-20"}
    # the gate was taken: nothing is pending any more
    assert main(["task", "approve", run_id, "--store", str(store_file)]) == 2
    assert f"run {run_id} has no gate waiting for a decision" in capsys.readouterr().err


@pytest.mark.subprocess
def test_a_rejection_from_another_process_cancels_the_task(
    task: TaskProcess, store_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id, gate_id = gate_of(task)
    argv = ["task", "approve", run_id, gate_id, "--reject", "--store", str(store_file)]
    assert main([*argv, "--by", "ops:ana", "--reason", "not during the freeze"]) == 0
    said = capsys.readouterr().out  # the decision as made: who, and why
    assert f"rejected gate {gate_id} of run {run_id} by ops:ana: not during the freeze (" in said
    assert task.finish() == 1
    decision = next(e for e in task.events if e["type"] == "gate_decision")
    assert decision["approved"] is False and decision["decided_by"] == "ops:ana"
    assert decision["reason"] == "not during the freeze"
    assert task.events[-1]["status"] == "cancelled"
    assert task.keys_untouched()
    stored = SqliteRunStore(store_file)
    record = stored.get_run(run_id)
    stored.close()
    assert record is not None and record.status == "cancelled"


@pytest.mark.subprocess
def test_task_approve_refuses_unknown_runs_and_gates(
    task: TaskProcess, store_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id, gate_id = gate_of(task)
    store = ["--store", str(store_file)]
    assert main(["task", "approve", "run_nope", *store]) == 2
    assert "no run 'run_nope'" in capsys.readouterr().err
    assert main(["task", "approve", run_id, "gate_nope", *store]) == 2
    assert f"has no gate 'gate_nope' waiting (waiting: {gate_id})" in capsys.readouterr().err
    assert main(["task", "approve", run_id, gate_id, "--reject", *store]) == 0
    assert task.finish() == 1


@pytest.mark.subprocess
def test_a_gate_nobody_answers_still_times_out(tmp_path: Path, store_file: Path) -> None:
    process = TaskProcess(tmp_path, store_file, "--gate-timeout", "0.5")
    try:
        assert process.finish() == 1
    finally:
        process.stop()
    assert "gate_decision" not in process.types()
    warning = next(e for e in process.events if e["type"] == "warning")
    assert "no decision within 0.5s" in warning["message"]
    assert process.events[-1]["status"] == "failed"
    assert process.keys_untouched()


def test_a_gate_of_a_run_nobody_executes_is_a_409(tmp_path: Path) -> None:
    """The frozen v2 store holds a run whose process died while its gate waited."""
    copy = tmp_path / "store_v2.db"
    shutil.copy(ROOT / "tests" / "fixtures" / "store_v2.db", copy)
    config = make_config(tmp_path, tokens=TOKENS, store=open_store(copy))
    with live_server(config) as live:
        url = f"{live.url}/api/runs/run_fixture_gated/gates/gate_fixture0001"
        response = httpx.post(url, json={"approve": True}, headers=ACME)
        assert response.status_code == 409
        assert "no other process is running" in response.json()["error"]["message"]
        assert httpx.post(url, json={"approve": True}, headers=GLOBEX).status_code == 404
    args = ["task", "approve", "run_fixture_gated", "--store", str(copy)]
    assert main(args) == 2  # interrupted: no process would take it


def test_task_approve_decides_a_gate_waiting_in_a_server(tmp_path: Path) -> None:
    """The server's own task runs look in the store too."""
    store_file = tmp_path / "served.db"
    config = make_config(tmp_path, store=open_store(store_file), tasks_dir=tasks_folder(tmp_path))
    with live_server(config) as live:
        run_id = start_run(live, {"task": "publish-notes", "inputs": {"title": "Hi"}})["run_id"]
        ws_events(live, run_id, until="confirmation_required")
        assert main(["task", "approve", run_id, "--store", str(store_file), "--by", "cli:x"]) == 0
        run = wait_finished(live, run_id)
        events = httpx.get(f"{live.url}/api/runs/{run_id}/events").json()["events"]
    assert run["status"] == "completed"
    decision = next(e for e in events if e["type"] == "gate_decision")
    assert decision["decided_by"] == "cli:x"
    assert (tmp_path / "ws" / "NOTES.md").read_text() == "Hi"
