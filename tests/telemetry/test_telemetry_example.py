"""examples/telemetry.py runs as a program and prints the run's span tree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.subprocess
def test_telemetry_example_prints_the_span_tree() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "telemetry.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "answer: 42",
        "invoke_agent loopwright [gen_ai.request.model=calc, gen_ai.usage.output_tokens=27]",
        "  chat calc [gen_ai.request.model=calc, gen_ai.usage.output_tokens=17]",
        "  execute_tool add [gen_ai.tool.name=add]",
        "  chat calc [gen_ai.request.model=calc, gen_ai.usage.output_tokens=10]",
    ]
