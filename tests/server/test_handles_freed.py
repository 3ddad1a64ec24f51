"""A long-lived server keeps no handle of a finished run: its engine forgets it (the store
holds the run). 200 runs through a server on the embedded engine; on Temporal, the same in
tests/temporal/test_server_handles.py."""

from __future__ import annotations

import json
from pathlib import Path

from server_helpers import handles_left, live_server, make_config, start_many, write_script

from loopwright.store import SqliteRunStore

RUNS = 200


def test_a_server_holds_no_handle_of_its_finished_runs(tmp_path: Path) -> None:
    model = write_script(tmp_path / "answer.json", [json.dumps({"final_answer": "done"})])
    store = SqliteRunStore(tmp_path / "runs.db")
    try:
        with live_server(make_config(tmp_path, store=store)) as server:
            run_ids = start_many(server, model, RUNS)
            assert len(set(run_ids)) == RUNS
            assert handles_left(server, run_ids, limit_s=300) == 0
    finally:
        store.close()
