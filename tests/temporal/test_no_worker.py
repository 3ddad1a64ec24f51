"""A Temporal run while no worker polls its task queue, as a user sees it: `run --engine
temporal` says so within a bounded time and the run is listed (queued) in `runs list`; a
decision made while the run's workers are gone is stored, says so, and is taken when a
worker comes back (recorded with who decided); `Runtime.start_task` on the Temporal engine
checks the task as the command line does, before anything starts."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from task_files import GATED, gated_task
from temporal_helpers import (
    TOOLS_FILE,
    Workers,
    gates_opened,
    loopwright_env,
    run_command,
    write_script,
)
from temporalio.service import RPCError

from inprocess_cli import CliRun, clean_env
from loopwright.engines.temporal import DevServer
from loopwright.store import open_store

KEY_ENV = "LOOPWRIGHT_TEMPORAL_KEY_FILE"
"""The variable naming the payload key file (docs/security.md)."""

NOTICE_BOUND_S = 30.0
"""The notice comes this soon after the run is stored `queued`: the engine's 5 s without a
worker, plus the workflow's start on a loaded machine."""
START_BOUND_S = 180.0
"""How long the command may take to store its run: a Python process's start-up and its
connections, which took over a minute on a 2-core machine at a load average of 20-40."""
WORKER_WAIT_S = 2.0
"""How long `runs approve --worker-wait` gives a worker that polled lately to take the
decision (30 s by default)."""
APPROVE_BOUND_S = 30.0
"""`runs approve` returns this soon while the run's only worker is gone: the 2 s a worker
that polled lately is given to take it, plus start-up on a loaded machine (under the
default wait of 30 s: the option is what bounds it)."""
RUN_BOUND_S = 120.0


def _lines(stream: IO[str] | None) -> queue.Queue[str]:
    """The stream's lines as they come (read by a thread, which closes it at its end)."""
    assert stream is not None
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        with stream:
            for line in stream:
                lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _until(lines: queue.Queue[str], text: str, deadline: float) -> str:
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"no line with {text!r} in time"
        line = lines.get(timeout=left)
        if text in line:
            return line


def _stored_queued(store_url: str, proc: subprocess.Popen[str]) -> float:
    """When the command's run is stored `queued` (polled: the store has nothing to wait
    on for a run another process creates), within START_BOUND_S."""
    store = open_store(store_url)
    try:
        deadline = time.monotonic() + START_BOUND_S
        while not store.list_runs(status="queued"):
            assert proc.poll() is None, f"the command exited ({proc.returncode})"
            assert time.monotonic() < deadline, f"no run stored in {START_BOUND_S:g} s"
            time.sleep(0.1)
        return time.monotonic()
    finally:
        store.close()


def _loopwright(run_cli: Callable[..., CliRun], home: Path, *args: str) -> CliRun:
    """`loopwright ARGS` in this process, with the suite's payload key (the run it acts on
    is another process's: the `loopwright run` the test started)."""
    return run_cli(*args, env=clean_env(home, **{KEY_ENV: os.environ[KEY_ENV]}))


def test_a_run_with_no_worker_says_so_and_is_listed(
    workers: Workers, tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    out = tmp_path / "out.txt"
    script = write_script(tmp_path, out, ["line1"])
    command = run_command(script, tmp_path, workers.store, "--engine", "temporal",
                          "--temporal", workers.address, "--task-queue", workers.queue,
                          "--heartbeat-timeout", "7")  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=loopwright_env())  # fmt: skip
    try:
        err = _lines(proc.stderr)
        queued_at = _stored_queued(workers.store, proc)
        notice = _until(err, "no worker polls", queued_at + NOTICE_BOUND_S)
        assert f"task queue {workers.queue!r}" in notice and "listed as queued" in notice
        listed = _loopwright(run_cli, tmp_path / "home", "runs", "list", "--status", "queued",
                             "--json", "--store", workers.store)  # fmt: skip
        [queued] = json.loads(listed.out)
        assert queued["engine"] == "temporal" and queued["run_id"] in notice
        workers.start()  # a worker comes: the run goes on where it waited
        proc.wait(timeout=RUN_BOUND_S)
        assert proc.stdout is not None
        stdout = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == 0, workers.logs()
    assert out.read_text() == "line1\n"
    assert json.loads(stdout.splitlines()[-1])["status"] == "completed"
    assert asyncio.run(_heartbeat_timeouts(workers.address, queued["run_id"])) == {7}


async def _gate_open(address: str, run_id: str) -> None:
    """Once the gate is open in the workflow (not only stored): the worker is then killed
    while the run waits for the decision, not while it reports the gate's activity."""
    from loopwright.engines.temporal import connect

    handle = (await connect(address)).get_workflow_handle(run_id)
    await asyncio.wait_for(gates_opened(handle), RUN_BOUND_S)


async def _heartbeat_timeouts(address: str, run_id: str) -> set[int]:
    """The heartbeat timeouts (s) of the run's model and tool activities, from its history."""
    from loopwright.engines.temporal import connect

    history = await (await connect(address)).get_workflow_handle(run_id).fetch_history()
    scheduled = [e.activity_task_scheduled_event_attributes for e in history.events]
    return {a.heartbeat_timeout.seconds for a in scheduled if a.heartbeat_timeout.seconds}


def test_a_decision_while_the_worker_is_gone_is_stored_then_taken(
    workers: Workers, tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    out = tmp_path / "out.txt"
    script = write_script(tmp_path, out, ["line1"])
    command = run_command(script, tmp_path, workers.store, "--engine", "temporal",
                          "--temporal", workers.address, "--task-queue", workers.queue,
                          "--approve", "append_line")  # fmt: skip
    first = workers.start()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=loopwright_env(), stdin=subprocess.DEVNULL)  # fmt: skip
    try:
        shown = _lines(proc.stdout)
        gate = json.loads(_until(shown, '"confirmation_required"', time.monotonic() + RUN_BOUND_S))
        asyncio.run(_gate_open(workers.address, gate["run_id"]))
        first.send_signal(signal.SIGKILL)  # the run's only worker is gone
        first.wait()
        asked = time.monotonic()
        approved = _loopwright(run_cli, tmp_path / "home", "runs", "approve", gate["run_id"],
                               "--by", "ops:ana", "--store", workers.store, "--temporal",
                               workers.address, "--worker-wait", str(WORKER_WAIT_S))  # fmt: skip
        assert time.monotonic() - asked < APPROVE_BOUND_S
        assert approved.code == 0, approved.err
        assert "stored; it waits for a worker" in approved.out
        assert "the run takes it when one polls" in approved.err
        assert not out.exists()  # not yet: no worker
        workers.start()
        proc.wait(timeout=RUN_BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    assert proc.returncode == 0, workers.logs()
    assert out.read_text() == "line1\n"  # approved: the call ran, once
    store = open_store(workers.store)
    try:
        [decision] = [e for e in store.events(gate["run_id"]) if e.type == "gate_decision"]
    finally:
        store.close()
    assert decision.approved and decision.decided_by == "ops:ana"


async def test_start_task_checks_the_task_before_anything_starts(
    temporal_server: DevServer, tmp_path: Path
) -> None:
    """As `loopwright task run` does: a tool the task names that its tool file lacks, or a
    missing input, is an error here, and no run was registered nor workflow started."""
    from loopwright.engines.temporal import TemporalEngine, connect
    from loopwright.errors import ConfigurationError, TaskParseError
    from loopwright.runtime import Runtime
    from loopwright.tasks import TaskSpec
    from loopwright.testing import InMemoryRunStore

    client = await connect(temporal_server.address)
    store = InMemoryRunStore()
    runtime = Runtime(store, engine=TemporalEngine(temporal_server.address, store))
    bad_tool = tmp_path / "bad.yaml"
    bad_tool.write_text(GATED.format(tools=TOOLS_FILE, timeout=60).replace("tool: big",
                        "tool: no_such_tool"), encoding="utf-8")  # fmt: skip
    cases = [(bad_tool, {"out": "x"}, "no_such_tool"), (gated_task(tmp_path), {}, "out")]
    for index, (task_file, inputs, named) in enumerate(cases):
        run_id = f"run_checked_{index}_{tmp_path.name[-6:]}"
        spec = TaskSpec(task_file=str(task_file), inputs=inputs, workspace=str(tmp_path))
        with pytest.raises((ConfigurationError, TaskParseError), match=named):
            runtime.start_task(spec, run_id=run_id)
        assert store.get_run(run_id) is None  # nothing registered
        with pytest.raises(RPCError):  # nothing was started
            await client.get_workflow_handle(run_id).describe()
