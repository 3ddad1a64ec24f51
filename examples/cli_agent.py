"""An agent built in Python, for `loopwright run|chat|runs resume --agent cli_agent.py:NAME`
(examples/cli_agent.sh). A ScriptedModel stands in for the LLM; yours would be a real model."""

from __future__ import annotations

import json
import os
from pathlib import Path

from loopwright import AgentExecutor, tool
from loopwright.testing import ScriptedModel


@tool(effect="destructive")
def delete_file(name: str) -> str:
    """Delete a file of the folder named by REPORTS.

    Args:
        name: the file's name
    """
    (Path(os.environ["REPORTS"]) / name).unlink()
    return f"deleted {name}"


def cleaner() -> AgentExecutor:
    """A factory: `--agent cli_agent.py:cleaner` calls it. A call of `delete_file` waits for
    a decision, and with `on_pending="wait"` the run ends `waiting` until one is made."""
    replies = [
        {"thought": "remove it", "action": "delete_file", "action_input": {"name": "2023.txt"}},
        {"thought": "done", "final_answer": "Deleted the 2023 report."},
    ]
    model = ScriptedModel([json.dumps(reply) for reply in replies])
    return AgentExecutor(model, [delete_file], approve=["destructive"], on_pending="wait")
