"""`loopwright serve --agent` as a real process: examples/served_agent.py's agent behind the
API (a run that ends waiting, approved, resumed; a follow-up; a fork), and the one-line
refusals of an --agent that names no agent."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "served_agent.py"
LOOPWRIGHT = [sys.executable, "-m", "loopwright"]


@pytest.fixture
def served_example(tmp_path: Path) -> Iterator[str]:
    process = subprocess.Popen(
        [*LOOPWRIGHT, "serve", "--port", "0", "--store", ":memory:", "--workspace", str(tmp_path),
         "--agent", f"{EXAMPLE}:make_agent"],
        stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert process.stderr is not None
    try:
        line = process.stderr.readline()  # printed once the socket listens
        assert f"agent {EXAMPLE}:make_agent" in line, line
        yield line.split(" on ")[1].split()[0]
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


def test_the_served_agent_example(served_example: str) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), served_example],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        '1. waiting: Allow the agent to call archive {"name": "notes.txt"}?',
        "2. completed: Archived notes.txt.",
        "3. turn 2 completed: In the archive, as notes.txt.",
        "4. fork at step 0 completed: Kept notes.txt where it was.",
    ]


@pytest.mark.parametrize(
    ("agent", "says"),
    [
        ("no_such_module_here:agent", "--agent: cannot import module 'no_such_module_here'"),
        (f"{EXAMPLE}:nothing", "has no attribute 'nothing'"),
        (f"{EXAMPLE}:archive", "archive is a Tool, not an AgentExecutor"),
        ("served_agent", "expected module:attribute or path/to/file.py:attribute"),
    ],
)
def test_an_agent_that_is_not_one_is_refused_in_one_line(
    tmp_path: Path, agent: str, says: str
) -> None:
    result = subprocess.run(
        [*LOOPWRIGHT, "serve", "--port", "0", "--store", ":memory:", "--agent", agent],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    assert says in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
