"""An agent run's tool approvals on Temporal: a call that needs approval waits in the
workflow for the Update `approve` (sent here from another process than the worker's);
the approved call runs once, the rejected one never runs and the model is told why."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from temporal_helpers import (
    TOOLS_FILE,
    TemporalRuns,
    Workers,
    action,
    final,
    loopwright_env,
    model_call,
    run_command,
    write_script,
)

from loopwright.events import (
    ConfirmationRequiredEvent,
    GateDecisionEvent,
    ModelResponseEvent,
    ToolCallEvent,
)
from loopwright.runtime import RunSpec
from loopwright.store import open_store


async def next_gate(store_url: str, run_id: str, seen: set[str]) -> str:
    """The request id of the run's next stored `confirmation_required` (bounded wait)."""
    store = open_store(store_url)
    try:
        last = 0
        async with asyncio.timeout(90):
            while True:
                for event in store.events(run_id):
                    if isinstance(event, ConfirmationRequiredEvent) and (
                        event.request_id not in seen
                    ):
                        seen.add(event.request_id)
                        return event.request_id
                    last = event.seq
                await store.wait_for_events(run_id, after=last, timeout=1.0)
    finally:
        store.close()


async def test_a_tool_approval_is_a_workflow_update(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    out = tmp_path / "out.txt"
    script = tmp_path / "script.json"
    replies = [action("append_line", path=str(out), text="approved-line"),
               action("append_line", path=str(out), text="rejected-line"),
               final("one line written")]  # fmt: skip
    script.write_text(json.dumps(replies), encoding="utf-8")
    spec = RunSpec(
        request="write two lines",
        model=f"scripted:{script}",
        tools=(f"{TOOLS_FILE}:append_line",),
        workspace=str(tmp_path),
        approve=("append_line",),
    )
    workers.start()
    handle = await runs.start(spec)
    seen: set[str] = set()
    first = await next_gate(workers.store, handle.id, seen)
    assert not out.exists()  # nothing runs before the decision
    await runs.decide(handle.id, first, True, "ops")
    second = await next_gate(workers.store, handle.id, seen)
    assert out.read_text() == "approved-line\n"
    await runs.decide(handle.id, second, False, "ops", "not twice")
    outcome = await asyncio.wait_for(handle.result(), 60)

    assert outcome["status"] == "completed"
    assert out.read_text() == "approved-line\n"  # the rejected call never ran
    store = open_store(workers.store)
    try:
        events = store.events(handle.id)
    finally:
        store.close()
    decisions = [
        (e.approved, e.decided_by, e.reason) for e in events if isinstance(e, GateDecisionEvent)
    ]
    assert decisions == [(True, "ops", ""), (False, "ops", "not twice")]
    calls = [e.arguments["text"] for e in events if isinstance(e, ToolCallEvent)]
    assert calls == ["approved-line"]
    last_call = [e for e in events if isinstance(e, ModelResponseEvent)][2]
    store = open_store(workers.store)
    try:  # the last model call's messages, as the worker sent them (its fingerprint checked)
        shown = await model_call(store, handle.id, last_call.seq)
    finally:
        store.close()
    assert shown["request_problem"] is None, shown["request_problem"]
    told = shown["request"]["messages"][-1]["content"]
    assert "denied it. Reason given: not twice." in told  # the model is told why


def test_yes_approves_the_calls_of_a_run_on_temporal(workers: Workers, tmp_path: Path) -> None:
    """`loopwright run --engine temporal --approve TOOL --yes`: as on the embedded engine,
    each waiting call is approved (here: by sending the Update), and runs once."""
    out = tmp_path / "out.txt"
    script = write_script(tmp_path, out, ["one", "two"])
    workers.start()
    command = run_command(script, tmp_path, workers.store, "--engine", "temporal",
                          "--temporal", workers.address, "--task-queue", workers.queue,
                          "--approve", "append_line", "--yes")  # fmt: skip
    proc = subprocess.run(command, capture_output=True, text=True, env=loopwright_env(),
                          timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == "one\ntwo\n"
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    decisions = [(e["approved"], e["decided_by"]) for e in events if e["type"] == "gate_decision"]
    assert decisions == [(True, "--yes"), (True, "--yes")]
