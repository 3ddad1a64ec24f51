"""examples/compat_seeds.py runs as a program and prints what each seed's contract says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.subprocess
def test_compat_example_runs_each_seed_contract() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "compat_seeds.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "seed 001: run() -> '42'"
    assert lines[1] == "  add({'a': 17, 'b': 25}) -> 42"
    assert lines[2] == "seed 002: Current iteration: 1/15"
    dicts = [json.loads(line.removeprefix("seed 004: ")) for line in lines[3:-1]]
    assert [d["type"] for d in dicts] == [
        "task_start",
        "step_start",
        "confirmation_required",
        "step_complete",
        "step_start",
        "function_result",
        "step_complete",
        "task_complete",
    ]
    assert dicts[5]["result"] == {"site": "hq", "count": 3}
    assert dicts[-1]["status"] == "completed"
    assert lines[-1].startswith("seed 004: state in clients/acme/task-runs/run_")
