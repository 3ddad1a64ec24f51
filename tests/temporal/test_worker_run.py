"""A scripted agent run on a Temporal worker in another process: its events land in the
Postgres store (one transaction per batch) and equal the embedded engine's, field by field
except ids and times."""

from __future__ import annotations

import json
import subprocess
import sys
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


def test_a_run_on_a_worker_matches_the_embedded_engine(workers: Workers, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    script = write_script(tmp_path, out, ["line1", "line2"])
    code, embedded, err = _run(run_command(script, tmp_path, str(tmp_path / "runs.db")))
    assert code == 0, err
    assert out.read_text() == "line1\nline2\n"
    out.unlink()

    workers.start()
    command = run_command(script, tmp_path, workers.store, "--engine", "temporal",
                          "--temporal", workers.address, "--task-queue", workers.queue)  # fmt: skip
    code, shown, err = _run(command)
    assert code == 0, f"{err}\n{workers.logs()}"
    assert out.read_text() == "line1\nline2\n"  # each effect once

    run_id = str(shown[0]["run_id"])
    store = open_store(workers.store)
    try:
        stored = [event_to_dict(e) for e in store.events(run_id)]
        record = store.get_run(run_id)
    finally:
        store.close()
    assert stored == shown  # what the command showed is what the workers stored
    assert [e["seq"] for e in stored] == list(range(1, len(stored) + 1))
    assert shape(stored) == shape(embedded)
    assert record is not None and record.status == "completed"
    assert record.answer == "wrote 2 lines"
    show = subprocess.run(
        [sys.executable, "-m", "loopwright", "runs", "show", run_id, "--store", workers.store],
        capture_output=True, text=True, env=loopwright_env(), timeout=60,
    )  # fmt: skip
    assert show.returncode == 0, show.stderr
    assert "completed" in show.stdout and "append_line" in show.stdout
