"""A long-lived server on the Temporal engine keeps no handle of a finished run: the
engine forgets it once its workflow ended (200 runs through an in-process server whose
Runtime starts them on a worker in another process)."""

from __future__ import annotations

import sys
from pathlib import Path

from temporal_helpers import Workers, final

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_helpers import handles_left, live_server, make_config, start_many, write_script

from loopwright.engines.temporal import TemporalEngine
from loopwright.runtime import Runtime
from loopwright.store import open_store

RUNS = 200


def test_a_temporal_server_holds_no_handle_of_its_finished_runs(
    workers: Workers, tmp_path: Path
) -> None:
    model = write_script(tmp_path / "answer.json", [final("done")])
    store = open_store(workers.store)
    workers.start()
    config = make_config(tmp_path)
    engine = TemporalEngine(workers.address, store, task_queue=workers.queue)
    config.runtime = Runtime(store, engine=engine)
    try:
        with live_server(config) as server:
            run_ids = start_many(server, model, RUNS)
            assert handles_left(server, run_ids, limit_s=900) == 0, workers.logs()[-2000:]
    finally:
        store.close()
