"""A task run on a Temporal worker in another process: `loopwright task run --engine
temporal` shows exactly the events the workers stored, which equal the embedded engine's
field by field except ids and times; each effect happens once. The commands run in this
process (`run_cli`) where the process boundary tested is the worker's; Ctrl-C is sent to a
command that is a process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from task_files import failing_task, gated_task
from temporal_helpers import Workers, loopwright_env, run_in_process, shape

from inprocess_cli import CliRun
from loopwright.events import event_to_dict
from loopwright.store import open_store


def task_command(task: Path, out: Path, workspace: Path, store: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "loopwright", "task", "run", str(task),
            "--input", f"out={out}", "--workspace", str(workspace), "--store", store,
            "--state-dir", str(workspace / "state"), "--json", *extra]  # fmt: skip


def stored_events(store_url: str, run_id: str) -> list[dict[str, object]]:
    store = open_store(store_url)
    try:
        return [event_to_dict(e) for e in store.events(run_id)]
    finally:
        store.close()


def comparable(events: list[dict[str, object]]) -> list[dict[str, object]]:
    """`shape`, with the run id (in call ids) replaced, without gate ids (made from it) and
    the run's own folders (backups, the recorded spec's state folder)."""
    run_id = str(events[0]["run_id"])
    out = []
    for event in shape(events):
        event = {k: v for k, v in event.items() if k not in ("backup_path", "spec", "request_id")}
        out.append(json.loads(json.dumps(event).replace(run_id, "RUN")))
    return out


def test_a_task_run_on_a_worker_matches_the_embedded_engine(
    workers: Workers, tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    task = gated_task(tmp_path)
    out = tmp_path / "out.txt"
    out.write_text("", encoding="utf-8")
    embedded_command = task_command(task, out, tmp_path, str(tmp_path / "runs.db"), "--yes")
    code, embedded, err = run_in_process(run_cli, embedded_command, tmp_path / "home")
    assert code == 0, err
    assert out.read_text() == "after-the-gate\n"
    out.write_text("", encoding="utf-8")

    workers.start()
    command = task_command(task, out, tmp_path, workers.store, "--yes", "--engine", "temporal",
                           "--temporal", workers.address, "--task-queue", workers.queue)  # fmt: skip
    code, shown, err = run_in_process(run_cli, command, tmp_path / "home")
    assert code == 0, f"{err}\n{workers.logs()}"
    assert out.read_text() == "after-the-gate\n"  # the tool after the gate ran once

    run_id = str(shown[0]["run_id"])
    stored = stored_events(workers.store, run_id)
    assert stored == shown  # what the command showed is what the workers stored
    assert [e["seq"] for e in stored] == list(range(1, len(stored) + 1))
    assert comparable(stored) == comparable(embedded)
    types = [e["type"] for e in stored]
    assert types.count("confirmation_required") == 1 and types.count("change_recorded") == 1
    decision = next(e for e in stored if e["type"] == "gate_decision")
    assert decision["approved"] is True and decision["decided_by"] == "--yes"
    record = open_store(workers.store)
    try:
        row = record.get_run(run_id)
    finally:
        record.close()
    assert row is not None and row.kind == "task" and row.status == "completed"


def test_ctrl_c_cancels_a_task_run_waiting_at_its_gate(workers: Workers, tmp_path: Path) -> None:
    task = gated_task(tmp_path)
    out = tmp_path / "out.txt"
    workers.start()
    command = task_command(task, out, tmp_path, workers.store, "--engine", "temporal",
                           "--temporal", workers.address, "--task-queue", workers.queue)  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=loopwright_env())  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:  # until the gate waits (no terminal: nobody is asked)
        if json.loads(line)["type"] == "confirmation_required":
            break
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=60)
    elapsed = time.monotonic() - started

    assert proc.returncode == 130, err
    assert elapsed < 30.0, f"Ctrl-C took {elapsed:.1f}s to end the run"
    last = json.loads(rest.splitlines()[-1])
    assert (last["type"], last["status"]) == ("run_finished", "cancelled")
    assert not out.exists()  # the write after the gate never ran
    stored = stored_events(workers.store, str(last["run_id"]))
    assert stored[-1] == last and stored[-2]["type"] == "task_complete"


def test_a_failed_task_run_is_rolled_back_on_its_worker(
    workers: Workers, tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    out = tmp_path / "out.txt"
    out.write_text("original\n", encoding="utf-8")
    workers.start()
    command = task_command(failing_task(tmp_path), out, tmp_path, workers.store, "--yes",
                           "--rollback-on-failure", "--engine", "temporal",
                           "--temporal", workers.address, "--task-queue", workers.queue)  # fmt: skip
    code, shown, err = run_in_process(run_cli, command, tmp_path / "home")
    assert code == 1, err
    assert out.read_text() == "original\n"  # the append was undone from its backup
    kinds = [e["type"] for e in shown]
    assert kinds.count("change_recorded") == 1
    undo = [e for e in shown if e["type"] == "function_result" and e["function"] == "undo"]
    assert len(undo) == 1 and undo[0]["success"] is True
    assert (shown[-1]["type"], shown[-1]["status"]) == ("run_finished", "rolled_back")
