"""Follow-ups and forks over HTTP on a server whose runs execute on Temporal workers (a
worker in another process): each turn a workflow of its own, linked to the one before."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
from temporal_helpers import Workers, final

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_helpers import live_server, make_config, start_run, wait_finished, write_script

from loopwright.engines.temporal import TemporalEngine
from loopwright.runtime import Runtime
from loopwright.store import open_store


def test_a_follow_up_and_a_fork_on_temporal(workers: Workers, tmp_path: Path) -> None:
    model = write_script(tmp_path / "answer.json", [final("done")])
    store = open_store(workers.store)
    workers.start()
    config = make_config(tmp_path)
    config.runtime = Runtime(store, engine=TemporalEngine(workers.address, store,
                                                          task_queue=workers.queue))  # fmt: skip
    try:
        with live_server(config) as server:
            first = start_run(server, {"request": "first turn", "model": model})
            assert wait_finished(server, first["run_id"])["status"] == "completed"
            second = start_run(server, {"request": "second turn", "after": first["run_id"]})
            turn = wait_finished(server, second["run_id"])
            assert (turn["status"], turn["engine"]) == ("completed", "temporal"), workers.logs()
            assert turn["after_run_id"] == first["run_id"]
            assert [t["run_id"] for t in turn["turns"]] == [first["run_id"], second["run_id"]]
            forked = httpx.post(f"{server.url}/api/runs/{second['run_id']}/fork",
                                json={"at": 0, "request": "again"}, timeout=60)  # fmt: skip
            assert forked.status_code == 201, forked.text
            fork = wait_finished(server, forked.json()["run_id"])
            assert fork["status"] == "completed", workers.logs()[-2000:]
            assert fork["fork_of"] == {"run_id": second["run_id"], "step": 0}
            assert fork["after_run_id"] == first["run_id"]  # a fork follows the same turn
    finally:
        store.close()
