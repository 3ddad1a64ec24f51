"""Task runs go through the run store: state after every step, export, rollback from it."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.events import Event, FunctionResultEvent
from loopwright.runtime import Runtime, task_state
from loopwright.store import SqliteRunStore

EXAMPLES = Path(__file__).parents[2] / "examples" / "tasks"


def test_a_task_run_is_stored_exported_and_rolled_back_from_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = Path(shutil.copytree(EXAMPLES / "workspace", tmp_path / "ws"))
    original = (ws / "keys.json").read_bytes()
    store = tmp_path / "runs.db"
    common = ["--store", str(store), "--state-dir", str(tmp_path / "state")]
    args = ["task", "run", str(EXAMPLES / "rotate-keys.yaml"), "--workspace", str(ws)]
    args += ["--input", "as_of=2025-06-01", "--client", "acme", "--yes", "--json", *common]
    assert main(args) == 0
    [record] = SqliteRunStore(store).list_runs(tenant="acme")
    assert record.kind == "task" and record.status == "completed"
    capsys.readouterr()

    assert main(["runs", "export", record.run_id, "--store", str(store)]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["task_id"] == record.run_id and state["status"] == "completed"
    assert "verify" in [s["step_name"] for s in state["steps_completed"]]
    assert state["change_log"][0]["step"] == "rotate"
    exported = json.loads(next((tmp_path / "state").rglob("task-runs/*.json")).read_text())
    assert {k: exported[k] for k in ("task_id", "status", "change_log")} == {
        k: state[k] for k in ("task_id", "status", "change_log")
    }

    json_file = next((tmp_path / "state").rglob(f"task-runs/{record.run_id}.json"))
    json_file.unlink()  # the JSON file is only an export: the store holds the state
    assert main(["task", "rollback", record.run_id, "--json", *common]) == 0
    assert (ws / "keys.json").read_bytes() == original
    runs = {r.run_id: r for r in SqliteRunStore(store).list_runs()}
    assert runs[record.run_id].status == "rolled_back"
    [rollback] = [r for r in runs.values() if r.parent_run_id == record.run_id]
    assert rollback.kind == "task" and rollback.status == "completed"
    assert main(["task", "rollback", record.run_id, *common]) == 1
    assert "already rolled back" in capsys.readouterr().err


def test_runtime_rollback_undoes_a_task_run_as_a_stored_run_of_its_own(
    tmp_path: Path,
) -> None:
    """`Runtime.rollback` from Python: the files come back, the rollback is its own stored
    run (parent = the original) with each undo as an event, its lease is given back, and
    the original run is stored rolled_back (as after `task rollback`)."""
    ws = Path(shutil.copytree(EXAMPLES / "workspace", tmp_path / "ws"))
    original = (ws / "keys.json").read_bytes()
    store_path = tmp_path / "runs.db"
    args = ["task", "run", str(EXAMPLES / "rotate-keys.yaml"), "--workspace", str(ws), "--yes"]
    args += ["--input", "as_of=2025-06-01", "--store", str(store_path), "--json"]
    assert main(args) == 0
    assert (ws / "keys.json").read_bytes() != original
    store = SqliteRunStore(store_path)
    [record] = store.list_runs()
    runtime = Runtime(store)
    seen: list[Event] = []

    async def keep(event: Event) -> None:
        seen.append(event)

    async def roll_back() -> tuple[str, str]:
        handle = runtime.rollback(task_state(store, record.run_id), on_event=keep)
        return handle.run_id, await handle.wait()

    try:
        run_id, status = asyncio.run(roll_back())
    finally:
        runtime.close()
    assert status == "completed"
    assert (ws / "keys.json").read_bytes() == original
    rollback = store.get_run(run_id)
    assert rollback is not None and rollback.parent_run_id == record.run_id
    assert rollback.status == "completed" and runtime.leases.held == set()
    rolled_back = store.get_run(record.run_id)  # the Runtime marks the original run
    assert rolled_back is not None and rolled_back.status == "rolled_back"
    stored = store.events(run_id)
    assert [e.type for e in stored] == [e.type for e in seen]
    assert [e.type for e in stored][:2] == ["run_started", "task_start"]
    undone = [e for e in stored if isinstance(e, FunctionResultEvent)]
    assert undone and all(e.function == "undo" and e.success for e in undone)
