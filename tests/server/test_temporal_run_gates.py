"""A run that executes on Temporal workers (its record names the engine) has its gates
decided through its workflow only: a server without `--engine temporal` and `task approve`
without `--temporal` refuse, and leave no decision in the store where no workflow would
ever look for it. No Temporal server is needed."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from server_helpers import live_server, make_config

from loopwright.cli import main
from loopwright.events import ConfirmationRequiredEvent, RunStartedEvent
from loopwright.store import RunRecord, SqliteRunStore

RUN, GATE = "run_on_temporal01", "gate_0123456789ab"


def temporal_run(path: Path) -> SqliteRunStore:
    """A stored task run of the Temporal engine, waiting at a gate (a worker holds it)."""
    store = SqliteRunStore(path)
    store.register_run(RunRecord(RUN, "default", "task", "queued", "t", "", 0.5, 0.5, 0,
                                 engine="temporal"))  # fmt: skip
    store.append_many([
        RunStartedEvent(run_id=RUN, seq=1, ts=1.0, kind="task", request="t", model="",
                        tools=[], options={}, tenant="default"),
        ConfirmationRequiredEvent(run_id=RUN, seq=2, ts=2.0, step="approve", request_id=GATE,
                                  message="Go?", timeout_s=300.0),
    ])  # fmt: skip
    assert store.acquire_lease(RUN, "temporal-engine", 300.0)
    return store


def test_a_server_without_the_engine_refuses_a_temporal_runs_gate(tmp_path: Path) -> None:
    store = temporal_run(tmp_path / "runs.db")
    config = make_config(tmp_path, store=store)
    with live_server(config) as live:
        response = httpx.post(f"{live.url}/api/runs/{RUN}/gates/{GATE}", json={"approve": True})
        shown = httpx.get(f"{live.url}/api/runs/{RUN}").json()
    assert response.status_code == 409
    assert "executes on Temporal workers" in response.json()["error"]["message"]
    assert store.gate_decision(RUN, GATE) is None  # nothing left where no one looks
    assert [g["request_id"] for g in shown["pending_gates"]] == [GATE]


def test_task_approve_needs_the_temporal_address(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    temporal_run(path).close()
    assert main(["task", "approve", RUN, "--store", str(path)]) == 2
    assert "pass --temporal HOST:PORT" in capsys.readouterr().err
    store = SqliteRunStore(path)
    try:
        assert store.gate_decision(RUN, GATE) is None
    finally:
        store.close()
