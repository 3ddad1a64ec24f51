"""examples/temporal_run.py runs as documented against the suite's servers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from temporal_helpers import loopwright_env

from loopwright.engines.temporal import DevServer

EXAMPLE = Path(__file__).parents[2] / "examples" / "temporal_run.py"


def test_the_example_runs_on_a_worker(temporal_server: DevServer, pg_url: str) -> None:
    command = [
        sys.executable,
        str(EXAMPLE),
        "--temporal",
        temporal_server.address,
        "--store",
        pg_url,
    ]
    proc = subprocess.run(
        command, capture_output=True, text=True, env=loopwright_env(), timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith(": completed: The echo tool said: hello")
    assert any("tool_call -> hello" in line for line in lines)
    assert lines[-1].split()[1] == "run_finished"


TASK_EXAMPLE = EXAMPLE.with_name("temporal_task.py")


def test_the_task_example_is_approved_through_the_workflow(
    temporal_server: DevServer, pg_url: str
) -> None:
    command = [sys.executable, str(TASK_EXAMPLE), "--temporal", temporal_server.address,
               "--store", pg_url]  # fmt: skip
    proc = subprocess.run(
        command, capture_output=True, text=True, env=loopwright_env(), timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert " waits at gate gate_" in lines[0] and "Rotate 2 stale key(s) in staging?" in lines[0]
    assert lines[1].endswith(": completed (6 steps)")  # 4 and the pre- and post-task hooks
    kinds = [line.split()[1] for line in lines[2:]]
    assert kinds.count("confirmation_required") == 1 and kinds.count("gate_decision") == 1
    assert kinds.index("gate_decision") < kinds.index("change_recorded")  # approved, then done
    assert kinds[-1] == "run_finished"


AGENT_EXAMPLE = EXAMPLE.with_name("worker_agent.sh")


def test_the_worker_agent_example_runs_its_agent_on_a_worker(
    temporal_server: DevServer, pg_url: str, tmp_path: Path
) -> None:
    env = loopwright_env(
        HOME=str(tmp_path), TEMPORAL=temporal_server.address, STORE=pg_url,
        LOOPWRIGHT=f"{sys.executable} -m loopwright",
    )  # fmt: skip
    proc = subprocess.run(["sh", str(AGENT_EXAMPLE)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "✓ Final Answer: Order 42 was shipped on Monday.",
        "completed support-model",
    ], proc.stdout
