"""The live view writes a call's duration as the dashboard does: `13 ms` under a second,
`1.05 s` from one (not `(1050 ms)`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_helpers import cli

TOOLS = '''
import time

from loopwright import tool


@tool(effect="read")
def wait_a_second() -> str:
    """Take a little over a second, as a slow lookup does."""
    time.sleep(1.05)  # the duration under test, not a synchronisation
    return "waited"


@tool(effect="read")
def quick() -> str:
    """Answer at once."""
    return "quick"
'''


def test_a_call_of_a_second_or_more_is_shown_in_seconds(tmp_path: Path) -> None:
    (tmp_path / "slow_tools.py").write_text(TOOLS, encoding="utf-8")
    replies = [
        {"thought": "wait", "action": "wait_a_second", "action_input": {}},
        {"thought": "quick", "action": "quick", "action_input": {}},
        {"thought": "done", "final_answer": "waited"},
    ]
    (tmp_path / "script.json").write_text(json.dumps(replies), encoding="utf-8")
    tools = f"{tmp_path / 'slow_tools.py'}:wait_a_second,{tmp_path / 'slow_tools.py'}:quick"
    done = cli("run", "wait", "--model", f"scripted:{tmp_path / 'script.json'}",
               "--tools", tools, home=tmp_path)  # fmt: skip
    assert done.code == 0, done.err
    [slow] = [line for line in done.out.splitlines() if "Observing: waited" in line]
    assert re.search(r"\(1\.\d\d s\)$", slow), slow
    [fast] = [line for line in done.out.splitlines() if "Observing: quick" in line]
    assert re.search(r"\(\d{1,3} ms\)$", fast), fast
