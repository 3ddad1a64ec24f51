"""examples/resume_run.py runs as documented: killed, interrupted, resumed, replayed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "resume_run.py"


@pytest.mark.subprocess
def test_the_resume_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "during its third tool call; the store says: interrupted" in out
    assert "resumed: completed, answer '4 notes'" in out
    assert "note 3: The call to 'append_note' was interrupted" in out
    assert "notes.txt: note 1, note 2, note 3, note 4" in out  # note 3 once: never re-run
    assert "no divergence" in out
