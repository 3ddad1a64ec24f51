"""The command-line examples of conversations, forks, `--agent`, waiting runs and Ctrl-C
(examples/cli_*.sh) run as a user runs them, each checked for what it shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli_env

pytestmark = pytest.mark.subprocess

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(name: str, home: Path) -> str:
    env = cli_env(home, LOOPWRIGHT=f"{sys.executable} -m loopwright")
    env.pop("LOOPWRIGHT_STORE")  # the example picks its own
    env["PATH"] = os.environ["PATH"]
    done = subprocess.run(["sh", str(EXAMPLES / name)], env=env, cwd=home, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_conversation_example(tmp_path: Path) -> None:
    out = _example("cli_conversation.sh", tmp_path).splitlines()
    assert [line.split()[0] for line in out[:2]] == ["1", "2"]
    assert out[3:6] == [
        "completed\tand in yen?",
        "completed\tand in EUR?",
        "completed\tWhat is 12 USD in GBP?",
    ]
    assert out[6] == "✓ Final Answer: 12 USD is 11.04 EUR, says the tool."
    assert out[7].endswith("at step 9: it has 2 step(s), fork at 0 to 2")


def test_the_agent_example(tmp_path: Path) -> None:
    out = _example("cli_agent.sh", tmp_path).splitlines()
    assert out[:2] == ["status\trequest", "waiting\tClean up old reports"]
    assert out[2].startswith("approved of run run_")
    assert out[3] == "✓ Final Answer: Deleted the 2023 report."
    assert out[5:] == ["completed\tClean up old reports", "2023.txt is gone"]


def test_the_interrupt_example(tmp_path: Path) -> None:
    out = _example("cli_interrupt.sh", tmp_path).splitlines()
    said = (
        "was interrupted; `loopwright runs resume RUN_ID` goes on with it, "
        "`loopwright runs cancel RUN_ID` ends it"
    )
    assert out == [
        "exit status 130", said, "status\trequest", "interrupted\tsay hello",
        "✓ Final Answer: The echo tool said: hello",
        "exit status 130", said, "cancelled run RUN_ID (it was interrupted)",
        "status\trequest", "cancelled\tsay hello again", "completed\tsay hello",
    ]  # fmt: skip
