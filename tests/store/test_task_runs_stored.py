"""Task runs go through the run store: state after every step, export, rollback from it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loopwright.cli import main
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
