"""The crash test for task runs: a task run is SIGKILLed at random points, then resumed: a
handful of trials that prove the process boundary (test_fault_injection.py dies at every
event of the run deterministically, in one process, and shows each fate below).

Each trial runs a task in a child process (this file run as a script: the task executor
over a SQLite run store, printing one JSON event per line). The task writes six lines to a
file, each step with a tool that appends one line: `append_line` (not idempotent) or
`put_line` (idempotent), with an approval gate in the middle. The test reads N events
(N random), sometimes approves the gate through the store as soon as it asks, kills the
child with SIGKILL, then resumes the run in this process from the store alone
(`Runtime.resume`), deciding a gate that was still waiting through the store. One trial in
five goes through the real commands instead: `loopwright task run --yes` killed, then
`loopwright runs resume`, its gates approved through the store. It checks:

- no gap in `seq`, and the run ends with `run_finished`;
- every step completed once (a completed step is not repeated);
- a gate that was waiting when the process died waited again, and was decided once;
- an idempotent tool step that had started is run again; a non-idempotent one is not (its
  step fails: "effect unknown", and the run stops there);
- no line is written twice.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from task_lines import TOOL_STEPS, task_file

from loopwright.events import (
    ChangeRecordedEvent,
    ConfirmationRequiredEvent,
    Event,
    FunctionResultEvent,
    GateDecisionEvent,
    RunFinishedEvent,
    StepCompleteEvent,
    ToolCallStartedEvent,
    decode_event,
    encode_event,
)
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.tasks import GateBroker, TaskExecutor, TaskSettings, load_task, pending_gates

TRIALS = int(os.environ.get("TASK_CRASH_TRIALS", "5"))
SEED = 20261124
# run_started, task_start; per tool step: step_start, change_recorded, tool_call_started,
# function_result, step_complete; the gate: step_start, confirmation_required, gate_decision,
# step_complete; task_complete, run_finished
EVENTS = 2 + 5 * len(TOOL_STEPS) + 4 + 2
FIRST_CALL = 5  # the position of line1's tool_call_started (line2's: 5 later)


def settings(folder: Path) -> TaskSettings:
    """The Python child's settings (the CLI's are its defaults: every write step gated)."""
    # one explicit gate step; the write steps are not gated each (auto_gate off)
    return TaskSettings(
        workspace=folder, state_root=folder / "state", gate_timeout_s=120, auto_gate=False
    )


async def child(folder: Path) -> None:
    """The killed process: run the task, one JSON event per line on stdout."""
    store = SqliteRunStore(folder / "runs.db")
    runtime = Runtime(store)
    loaded = load_task(task_file(folder))
    executor = TaskExecutor.for_task(
        loaded,
        settings=settings(folder),
        sink=runtime.publish,
        gates=GateBroker(store, poll_s=0.01),
    )
    async for event in executor.execute(loaded.definition, "write six lines"):
        sys.stdout.write(encode_event(event) + "\n")
        sys.stdout.flush()


@dataclass
class Trial:
    folder: Path
    kill_after: int
    approve_early: bool
    jitter_s: float
    cli: bool = False
    """Started by `loopwright task run ... --yes` (each write step gated and approved), and
    resumed by `loopwright runs resume`."""
    seen: list[Event] = field(default_factory=list)


def cli_command(folder: Path) -> list[str]:
    return [
        *(sys.executable, "-m", "loopwright", "task", "run", str(task_file(folder))),
        *("--workspace", str(folder), "--state-dir", str(folder / "state")),
        *("--store", str(folder / "runs.db"), "--yes", "--json"),
    ]


def run_and_kill(trial: Trial) -> Trial:
    proc = subprocess.Popen(
        cli_command(trial.folder) if trial.cli else [sys.executable, __file__, str(trial.folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        event = decode_event(line)
        trial.seen.append(event)
        if isinstance(event, ConfirmationRequiredEvent) and trial.approve_early and not trial.cli:
            store = SqliteRunStore(trial.folder / "runs.db")
            store.post_gate_decision(event.run_id, event.request_id, True, "test:early")
            store.close()
        if len(trial.seen) >= trial.kill_after:
            break
        if isinstance(event, ConfirmationRequiredEvent) and not (trial.approve_early or trial.cli):
            break  # nobody approves: the gate waits, and is killed waiting
    if trial.jitter_s:
        time.sleep(trial.jitter_s)  # a random kill point, not a wait for anything
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    return trial


async def resume(trial: Trial, run_id: str) -> str:
    """Resume the run from the store; a gate still waiting is decided through the store."""
    store = SqliteRunStore(trial.folder / "runs.db")
    gates = GateBroker(store, poll_s=0.01)
    runtime = Runtime(store, gates=gates)
    try:
        job = (await runtime.resume(run_id)).task
        waited = False
        deadline = time.monotonic() + 30
        while not job.done():
            pending = gates.pending(run_id)
            if pending:  # the resumed run waits at its gate: decide it as another process
                waited = True
                store.post_gate_decision(run_id, pending[0].request_id, True, "test:resume")
            await asyncio.wait({job}, timeout=0.01)
            assert time.monotonic() < deadline, "the resumed run did not finish"
        job.result()
        return "resumed, gate waited again" if waited else "resumed"
    finally:
        runtime.close()
        store.close()


def resume_by_cli(trial: Trial, run_id: str) -> str:
    """`loopwright runs resume RUN_ID`; its gates are approved through the store as they
    ask (`--yes` does not carry over: the resumed run asks like any other)."""
    db = trial.folder / "runs.db"
    command = [sys.executable, "-m", "loopwright", "runs", "resume", run_id]
    proc = subprocess.Popen(
        [*command, "--store", str(db), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = SqliteRunStore(db)
    deadline = time.monotonic() + 60
    try:
        while proc.poll() is None:
            for gate in pending_gates(store.events(run_id)):
                store.post_gate_decision(run_id, gate["request_id"], True, "test:resume")
            assert time.monotonic() < deadline, "the resumed run did not finish"
            time.sleep(0.01)  # polling the store, as `loopwright task approve` users would
    finally:
        store.close()
        if proc.poll() is None:
            proc.kill()
    _, errors = proc.communicate()
    assert proc.returncode in (0, 1), errors
    return "resumed"


def check(trial: Trial) -> str:
    store = SqliteRunStore(trial.folder / "runs.db")
    try:
        [record] = store.list_runs()
        fate = "finished before the kill"
        before = store.events(record.run_id)
        if record.status != "completed":
            assert record.status == "interrupted", record
            if trial.cli:
                fate = resume_by_cli(trial, record.run_id)
            else:
                fate = asyncio.run(resume(trial, record.run_id))
        events = store.events(record.run_id)
    finally:
        store.close()
    finished = {e.step for e in before if isinstance(e, FunctionResultEvent)}
    cut_off = [
        (e.call_id.rsplit(":", 1)[-1], e.tool_name)
        for e in before
        if isinstance(e, ToolCallStartedEvent) and e.call_id.rsplit(":", 1)[-1] not in finished
    ]
    if [tool for _, tool in cut_off] == ["put_line"]:  # idempotent: run again, done once
        [again] = [
            e for e in events if isinstance(e, FunctionResultEvent) and e.step == cut_off[0][0]
        ]
        assert again.success and again.function == "put_line"
        fate += ", an idempotent step run again"
    assert [e.seq for e in events] == list(range(1, len(events) + 1)), "gap in seq"
    assert isinstance(events[-1], RunFinishedEvent)
    done = [e.step for e in events if isinstance(e, StepCompleteEvent)]
    assert len(done) == len(set(done)), f"a step completed twice: {done}"
    backed_up = [e.step for e in events if isinstance(e, ChangeRecordedEvent)]
    assert len(backed_up) == len(set(backed_up)), f"a backup taken twice: {backed_up}"
    decisions = {e.request_id: e for e in events if isinstance(e, GateDecisionEvent)}
    assert len(decisions) == sum(isinstance(e, GateDecisionEvent) for e in events), "decided twice"
    assert all(d.approved for d in decisions.values())
    asked = [e for e in events if isinstance(e, ConfirmationRequiredEvent)]
    assert len(asked) == len({e.request_id for e in asked}), "a gate asked twice"
    waiting_at_kill = any(isinstance(e, ConfirmationRequiredEvent) for e in trial.seen) and not any(
        isinstance(e, GateDecisionEvent) for e in trial.seen
    )
    if "approve" in done and waiting_at_kill and not trial.approve_early and not trial.cli:
        assert [d.decided_by for d in decisions.values()] == ["test:resume"]
        assert fate == "resumed, gate waited again"
    file = trial.folder / "lines.txt"
    written = file.read_text().splitlines() if file.exists() else []
    assert len(written) == len(set(written)), f"a line written twice: {written}"
    results = {e.step: e for e in events if isinstance(e, FunctionResultEvent)}
    unknown = [r for r in results.values() if not r.success]
    if unknown:  # a non-idempotent step was cut off: it is not run again, and the run stops
        [failed] = unknown
        assert failed.function == "append_line" and "effect is unknown" in str(failed.error)
        assert events[-1].status == "failed" and done[-1] == failed.step
        assert written.count(f"line {failed.step[-1]}") <= 1
        return fate + " with an effect unknown"
    assert events[-1].status == "completed"
    assert written == [f"line {i}" for i in range(1, 7)]
    return fate


@pytest.mark.subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_task_runs_killed_at_random_points_resume_without_repeating_an_effect(
    tmp_path: Path,
) -> None:
    rng = random.Random(SEED)
    trials = []
    for index in range(TRIALS):
        folder = tmp_path / f"trial{index:02d}"
        folder.mkdir()
        jitter = rng.choice([0.0, 0.0, 0.001, 0.003])
        cli = index % 5 == 4  # some through the real `loopwright task run`
        events = EVENTS + 2 * len(TOOL_STEPS) if cli else EVENTS  # + its write steps' gates
        kill_after = rng.randint(1, events // 2 if cli else events)  # the CLI: mid-run
        if index % 5 == 0 and not cli:  # at the start of line1 (append) or line2 (put)
            kill_after, jitter = rng.choice([FIRST_CALL, FIRST_CALL + 5]), 0.0
        trials.append(Trial(folder, kill_after, rng.random() < 0.5, jitter, cli))
    with ThreadPoolExecutor(max_workers=min(4, (os.cpu_count() or 2) * 2)) as pool:
        killed = list(pool.map(run_and_kill, trials))
    fates = [check(trial) + (" [task run]" if trial.cli else "") for trial in killed]
    counts = {fate: fates.count(fate) for fate in set(fates)}
    print(counts)
    assert len(fates) == TRIALS
    assert sum(f.startswith("finished before the kill") for f in fates) < TRIALS // 2, counts
    assert any(f.startswith("resumed") and f.endswith("[task run]") for f in fates), counts
    spread = len({len(t.seen) for t in killed})
    assert spread > min(TRIALS, EVENTS) // 3, f"kill points are not spread ({spread})"


if __name__ == "__main__":
    asyncio.run(child(Path(sys.argv[1])))
