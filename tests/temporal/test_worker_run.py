"""A scripted agent run on a Temporal worker in another process: its events land in the
Postgres store (one transaction per batch) and equal the embedded engine's, field by field
except ids and times. The commands (`loopwright run`, `runs show`) run in this process
(`run_cli`): the process boundary tested is the worker's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from temporal_helpers import Workers, run_command, run_in_process, shape, write_script

from inprocess_cli import CliRun
from loopwright.events import event_to_dict
from loopwright.store import open_store


def test_a_run_on_a_worker_matches_the_embedded_engine(
    workers: Workers, tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    out, home = tmp_path / "out.txt", tmp_path / "home"
    script = write_script(tmp_path, out, ["line1", "line2"])
    command = run_command(script, tmp_path, str(tmp_path / "runs.db"))
    code, embedded, err = run_in_process(run_cli, command, home)
    assert code == 0, err
    assert out.read_text() == "line1\nline2\n"
    out.unlink()

    workers.start()
    command = run_command(script, tmp_path, workers.store, "--engine", "temporal",
                          "--temporal", workers.address, "--task-queue", workers.queue)  # fmt: skip
    code, shown, err = run_in_process(run_cli, command, home)
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
    show = run_cli("runs", "show", run_id, "--store", workers.store)
    assert show.code == 0, show.err
    assert "completed" in show.out and "append_line" in show.out
