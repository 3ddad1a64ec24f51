"""examples/last_turn.py runs as a program: the last turn answers, and without it the
same run stops on repetition with its steps kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "last_turn.py"


@pytest.mark.subprocess
def test_the_last_turn_example_answers_then_stops_without_it() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (  # what happens next; no "Stopped" in a run that then completes
        '  warning: The same call lookup({"key": "timeout"}) was made 3 times in a row: '
        "asking the model for a final answer (the run stops if none comes)"
    )
    assert lines[1] == "last turn on:  completed, 3 tool calls, answer: The timeout is 30 s."
    assert lines[2] == "last turn off: stopped (repetition), 3 tool calls kept"
