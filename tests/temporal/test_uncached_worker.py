"""Workflow code is deterministic while it runs, not only when a frozen history is
replayed: a worker that keeps no workflow in memory (`--max-cached-workflows 0`) replays
each run's whole history at every workflow task, and the run still ends as on the
embedded engine, each effect once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from temporal_helpers import Workers, loopwright_env, run_command, shape, write_script

from loopwright.events import event_to_dict
from loopwright.store import open_store


def _run(command: list[str]) -> tuple[int, list[dict[str, object]], str]:
    proc = subprocess.run(
        command, capture_output=True, text=True, env=loopwright_env(), timeout=180
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, events, proc.stderr


def test_a_worker_without_a_workflow_cache_replays_each_task(
    workers: Workers, tmp_path: Path
) -> None:
    out = tmp_path / "out.txt"
    lines = ["one", "two", "three", "four"]
    script = write_script(tmp_path, out, lines)
    code, embedded, err = _run(run_command(script, tmp_path, str(tmp_path / "runs.db")))
    assert code == 0, err
    out.unlink()

    workers.start("--max-cached-workflows", "0")
    command = run_command(script, tmp_path, workers.store, "--engine", "temporal",
                          "--temporal", workers.address, "--task-queue", workers.queue)  # fmt: skip
    code, shown, err = _run(command)
    assert code == 0, f"{err}\n{workers.logs()}"
    assert out.read_text() == "".join(f"{line}\n" for line in lines)  # each effect once
    store = open_store(workers.store)
    try:
        stored = [event_to_dict(e) for e in store.events(str(shown[0]["run_id"]))]
    finally:
        store.close()
    assert shape(stored) == shape(embedded)
    assert "nondetermin" not in workers.logs().lower().replace("-", "")
