"""Tools of the Temporal secrets tests that hand out secrets, as real tools do: `vault`
reads the worker's environment (LOOPWRIGHT_TEST_NOTE: a value only the worker's secrets
file names) and holds a detector-shaped key; `reader` is a sub-agent whose model reads the
vault and repeats what it saw, and a token of its own, in its answer."""

from __future__ import annotations

import json
import os

from loopwright import AgentExecutor, tool
from loopwright.testing import ScriptedModel

AWS_KEY = "AKIAQX7ZKM3N5P2R8T4V"  # detector-shaped (an AWS access key id)
SLACK_TOKEN = "xoxb-2048-1234567890-Ab3dEf6hIj9kLm2nOp5qRs8t"  # detector-shaped


@tool(effect="read")
def vault(name: str) -> str:
    """Read a value from the vault.

    Args:
        name: which value
    """
    return f"{name}: the note is {os.environ['LOOPWRIGHT_TEST_NOTE']}, the key is {AWS_KEY}"


def _reply(**fields: object) -> str:
    return json.dumps({"thought": "go on", **fields})


def _answer() -> str:
    note = os.environ.get("LOOPWRIGHT_TEST_NOTE", "")
    return f"the vault said {note}; my own token is {SLACK_TOKEN}"


reader = AgentExecutor(
    ScriptedModel(
        [_reply(action="vault", action_input={"name": "child"}), _reply(final_answer=_answer())],
        strict=False,
    ),
    [vault],
).as_tool("reader", "Read the vault in a sub-agent.")


def agent_step_script() -> list[str]:
    """The replies of a task's agent step that repeats secrets in its answer."""
    return [_reply(final_answer=_answer())]
