"""A sub-agent waits at its gate on a Temporal worker and every worker dies: its run shows
interrupted, but its lead's workflow still runs (it waits for a worker). `runs approve
CHILD_RUN_ID --temporal` stores the decision and says the run takes it when a worker comes;
the next worker tries the lead's call again, which resumes the child at its gate, takes the
decision, and runs the tool once."""

from __future__ import annotations

import signal
from pathlib import Path

from temporal_helpers import TemporalRuns, Workers
from test_temporal_subagents import approve_cli, spec_of, waiting_gate

from loopwright.engines.temporal import EngineSettings
from loopwright.events import GateDecisionEvent
from loopwright.store import open_store


async def test_a_subagents_gate_decided_while_its_workers_are_down(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    first = workers.start()
    spec = spec_of(tmp_path, ["once"], approve=("note",))
    handle = await runs.start(spec, settings=EngineSettings(heartbeat_timeout_s=3.0))
    store = open_store(workers.store)
    try:
        gate = await waiting_gate(store, handle.id, 0)
        first.send_signal(signal.SIGKILL)
        first.wait()
        child = store.get_run(gate.run_id)
        assert child is not None and child.status == "interrupted"  # its worker is gone
        done = approve_cli(workers.store, gate.run_id, "--temporal", workers.address)
        assert done.returncode == 0, done.stderr
        assert "stored; it waits for a worker" in done.stdout
        workers.start()
        assert (await handle.result())["status"] == "completed", workers.logs()
        events = store.events(gate.run_id)
    finally:
        store.close()
    assert (tmp_path / "notes.txt").read_text() == "once\n"
    decided = [e for e in events if isinstance(e, GateDecisionEvent)]
    assert [(d.request_id, d.approved, d.decided_by) for d in decided] == [
        (gate.request_id, True, "ops")
    ]
