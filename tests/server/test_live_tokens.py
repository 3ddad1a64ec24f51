"""A live run's tokens so far, in the run list and the run's page data, while it runs (the
list once showed `–` until the run ended)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from server_helpers import HeldModel, live_server, make_config, start_run, wait_finished

from loopwright.models import ModelRegistry
from loopwright.store import open_store
from loopwright.testing import InMemoryRunStore


def _tokens(run: dict[str, int]) -> int:
    return run["input_tokens"] + run["output_tokens"]


def _listed_tokens_reach(url: str, run_id: str, wanted: int, deadline_s: float = 30) -> int:
    """Poll the run list (as the dashboard does) until the run shows `wanted` tokens."""
    deadline = time.monotonic() + deadline_s
    while True:
        [run] = [r for r in httpx.get(f"{url}/api/runs").json()["runs"] if r["run_id"] == run_id]
        if _tokens(run) >= wanted or time.monotonic() > deadline:
            return _tokens(run)
        time.sleep(0.02)  # polling with a deadline, as the dashboard does; not a sync sleep


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_live_run_lists_its_tokens_so_far(tmp_path: Path, kind: str) -> None:
    model = HeldModel(calls=2)  # each reply: 10 tokens in, 5 out
    models = ModelRegistry().with_factory("held", lambda _name, _url: model)
    store = open_store(tmp_path / "runs.db") if kind == "sqlite" else InMemoryRunStore()
    config = make_config(tmp_path, store=store, models=models, allow_models=frozenset({"held:x"}))
    with live_server(config) as server:
        try:
            run_id = start_run(server, {"prompt": "echo", "model": "held:x", "tools": ["echo"]})[
                "run_id"
            ]
            model.release(1)
            assert _listed_tokens_reach(server.url, run_id, 15) == 15
            run = httpx.get(f"{server.url}/api/runs/{run_id}").json()
            assert run["status"] == "running" and _tokens(run) == 15
            model.release(1)
            assert _listed_tokens_reach(server.url, run_id, 30) == 30
        finally:
            model.release(10)
        finished = wait_finished(server, run_id)
    assert finished["status"] == "completed" and _tokens(finished) == 45
