"""The gate-decision mailbox of both stores: the first decision wins, per run and gate."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.clock import MockClock
from loopwright.store import GateDecision, RunStore, SqliteRunStore
from loopwright.testing import InMemoryRunStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    clock = MockClock(start=1_700_000_000.0)
    made: RunStore = (
        InMemoryRunStore(clock=clock)
        if request.param == "memory"
        else SqliteRunStore(tmp_path / "runs.db", clock=clock)
    )
    yield made
    made.close()


def test_no_decision_until_one_is_posted(store: RunStore) -> None:
    assert store.gate_decision("run_a", "gate_1") is None
    assert store.post_gate_decision("run_a", "gate_1", True, "api:acme")
    assert store.gate_decision("run_a", "gate_1") == GateDecision(
        "run_a", "gate_1", True, "api:acme", 1_700_000_000.0
    )


def test_the_first_decision_wins(store: RunStore) -> None:
    assert store.post_gate_decision("run_a", "gate_1", False, "cli:alice")
    assert not store.post_gate_decision("run_a", "gate_1", True, "api:acme")
    assert not store.post_gate_decision("run_a", "gate_1", False, "api:acme")
    decision = store.gate_decision("run_a", "gate_1")
    assert decision is not None
    assert (decision.approved, decision.decided_by) == (False, "cli:alice")


def test_decisions_are_kept_per_run_and_gate(store: RunStore) -> None:
    assert store.post_gate_decision("run_a", "gate_1", True, "x")
    assert store.post_gate_decision("run_a", "gate_2", False, "y")
    assert store.post_gate_decision("run_b", "gate_1", False, "z")
    got = {
        key: store.gate_decision(*key)
        for key in [("run_a", "gate_1"), ("run_a", "gate_2"), ("run_b", "gate_1")]
    }
    assert {k: (d.approved, d.decided_by) for k, d in got.items() if d} == {
        ("run_a", "gate_1"): (True, "x"),
        ("run_a", "gate_2"): (False, "y"),
        ("run_b", "gate_1"): (False, "z"),
    }
    assert store.gate_decision("run_b", "gate_2") is None


def test_two_sqlite_stores_on_one_file_race_and_one_decision_wins(tmp_path: Path) -> None:
    """Two processes' stores (here: two connections) post at once: exactly one wins, and
    both then read the winner's decision."""
    path = tmp_path / "runs.db"
    stores = [SqliteRunStore(path) for _ in range(4)]
    results: dict[int, bool] = {}
    start = threading.Barrier(len(stores))

    def post(index: int) -> None:
        start.wait()
        results[index] = stores[index].post_gate_decision("run_a", "gate_1", True, f"p{index}")

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [i for i, won in results.items() if won]
    assert len(winners) == 1
    decisions = {s.gate_decision("run_a", "gate_1") for s in stores}
    assert len(decisions) == 1
    [decision] = decisions
    assert decision is not None and decision.decided_by == f"p{winners[0]}"
    for store in stores:
        store.close()
