"""`loopwright worker` says on stdout what it does: a line when it takes a run (its id,
kind, request or task name), one when the run ends (status, duration), and on SIGTERM
which calls were in flight and, once it stopped, which of them finished there and which
it handed back to other workers. A real worker process; its stdout as the operator sees
it."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers, action, final, loopwright_env
from trial_helpers import until

from loopwright.engines.temporal import EngineSettings
from loopwright.runtime import RunSpec
from loopwright.tasks import TaskSpec

TASK = f"""\
name: report-task
tools: [{TOOLS_FILE}]
steps:
  - {{name: look, type: tool, tool: big, args: {{size: 12}}}}
"""
GRACEFUL_S = 5
"""Past the short call's 2 s (it finishes), then the long one is handed back: the test waits
this long (the 3 s over the short call are the margin for a loaded machine)."""


def wait_spec(folder: Path, name: str, seconds: float) -> RunSpec:
    script = folder / f"{name}.json"
    script.write_text(json.dumps([action("wait", seconds=seconds), final("waited")]))
    return RunSpec(request=f"wait {name}", model=f"scripted:{script}",
                   tools=(f"{TOOLS_FILE}:wait",), workspace=str(folder))  # fmt: skip


async def test_the_worker_says_what_it_takes_ends_and_hands_back(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    errors = tmp_path / "worker.err"
    command = [sys.executable, "-m", "loopwright", "worker", "--temporal", workers.address,
               "--store", workers.store, "--task-queue", workers.queue,
               "--graceful-timeout", str(GRACEFUL_S), "--allow-tools", str(TOOLS_FILE),
               "--allow-tools", str(tmp_path)]  # fmt: skip
    with errors.open("wb") as err:
        worker = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True,
                                  env=loopwright_env())  # fmt: skip
    try:
        quick = await runs.start(wait_spec(tmp_path, "quick", 0))
        assert (await quick.result())["status"] == "completed"
        task_file = tmp_path / "report.yaml"
        task_file.write_text(TASK)
        spec = TaskSpec(task_file=str(task_file), workspace=str(tmp_path))
        task = await runs.start_task(spec)
        await task.result()
        settings = EngineSettings(heartbeat_timeout_s=5.0)
        short = await runs.start(wait_spec(tmp_path, "short", 2), settings=settings)  # fmt: skip
        long = await runs.start(wait_spec(tmp_path, "long", 120), settings=settings)  # fmt: skip
        both_waiting = lambda: errors.read_text().count("waiting") == 3  # noqa: E731
        await until(both_waiting, errors.read_text, 60)  # quick's, short's and long's calls
        worker.send_signal(signal.SIGTERM)
        out, _ = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    lines = [line.removeprefix("loopwright worker: ") for line in out.splitlines()]
    assert lines[0].startswith(f"polling '{workers.queue}' on {workers.address}")
    assert lines[0].endswith(f"runs may use: code in {TOOLS_FILE}, code in {tmp_path}")
    assert f'took agent run {quick.id}: "wait quick"' in lines
    assert any(re.fullmatch(rf"run {quick.id} ended completed after \d+\.\ds", x) for x in lines)
    assert f'took task run {task.id}: "report-task"' in lines
    assert any(re.fullmatch(rf"run {task.id} ended completed after \d+\.\ds", x) for x in lines)
    (stopping,) = [x for x in lines if x.startswith("stopping:")]
    assert stopping.startswith("stopping: 2 calls in flight (")
    assert f"{short.id} tool_call" in stopping and f"{long.id} tool_call" in stopping
    assert stopping.endswith(f"{GRACEFUL_S}s to finish")
    assert lines[-1] == (
        f"stopped: 1 in-flight call finished, 1 handed back to other workers ({long.id})"
    )
    assert worker.returncode == 0
