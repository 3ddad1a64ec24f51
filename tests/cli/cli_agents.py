"""Agents built in Python for the CLI's `--agent` tests (`--agent path/to/cli_agents.py:NAME`):
a ScriptedModel stands in for the LLM. Each is made when the command loads it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from loopwright import AgentExecutor, tool
from loopwright.testing import ScriptedModel


@tool(effect="read")
def shout(text: str) -> str:
    """Say a text louder.

    Args:
        text: what to say
    """
    return text.upper() + "!"


@tool(effect="destructive")
def delete_file(name: str) -> str:
    """Delete a file of the folder named by CLI_AGENT_FOLDER.

    Args:
        name: the file's name
    """
    (Path(os.environ["CLI_AGENT_FOLDER"]) / name).unlink()
    return f"deleted {name}"


def _turn(text: str) -> list[str]:
    call = {"action": "shout", "action_input": {"text": text}}
    return [json.dumps(call), json.dumps({"final_answer": f"I shouted {text}"})]


def shouter() -> AgentExecutor:
    """A factory: two turns of a conversation (a chat's), one script."""
    return AgentExecutor(ScriptedModel(_turn("hi") + _turn("bye"), strict=False), [shout])


agent = AgentExecutor(ScriptedModel(_turn("once")), [shout])
"""An agent object (not a factory): one run."""


def cleaner() -> AgentExecutor:
    """An agent whose destructive call ends the run `waiting` for a decision."""
    replies = [
        {"action": "delete_file", "action_input": {"name": "old.txt"}},
        {"final_answer": "Cleaned up."},
    ]
    model = ScriptedModel([json.dumps(r) for r in replies])
    return AgentExecutor(model, [delete_file], approve=["destructive"], on_pending="wait")


not_an_agent = 42
"""Not an agent: `--agent` refuses it."""


def broken() -> AgentExecutor:
    raise RuntimeError("no key configured")
