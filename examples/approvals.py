"""Approval of agent tool calls: a destructive call waits for a person's decision.

    python examples/approvals.py

The agent may list files freely, but `delete_file` (declared `destructive`) waits at a gate.
Here the "person" is a function that reads each `confirmation_required` event and refuses
with a reason through the GateBroker (the terminal, `--yes`, the dashboard, the HTTP API and
`loopwright runs approve` all decide the same gate). The refusal is the model's
observation, and the file is still there.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from loopwright import AgentExecutor, tool
from loopwright.events import ConfirmationRequiredEvent, Event, GateDecisionEvent
from loopwright.tasks import GateBroker
from loopwright.testing import ScriptedModel

FOLDER = Path(tempfile.mkdtemp(prefix="loopwright-approvals-"))


@tool(effect="read")
def list_files() -> str:
    """List the files of the folder."""
    return " ".join(sorted(p.name for p in FOLDER.iterdir()))


@tool(effect="destructive")
def delete_file(name: str) -> str:
    """Delete a file of the folder.

    Args:
        name: the file's name
    """
    (FOLDER / name).unlink()
    return f"deleted {name}"


def script() -> ScriptedModel:
    replies = [
        {"thought": "see what is there", "action": "list_files", "action_input": {}},
        {"thought": "remove the old report", "action": "delete_file",
         "action_input": {"name": "report-2023.txt"}},
        {"thought": "not allowed; leave it", "final_answer": "Left report-2023.txt in place."},
    ]  # fmt: skip
    return ScriptedModel([json.dumps(r) for r in replies])


async def main() -> None:
    (FOLDER / "report-2023.txt").write_text("numbers")
    gates = GateBroker()

    async def reviewer(event: Event) -> None:
        if isinstance(event, ConfirmationRequiredEvent):
            print("asked:", event.message)
            gates.resolve(event.request_id, False, "reviewer", "we keep reports for 5 years")
        elif isinstance(event, GateDecisionEvent):
            print(f"decided: approved={event.approved} by {event.decided_by}: {event.reason}")

    model = script()
    agent = AgentExecutor(model, [list_files, delete_file], approve=["destructive"])
    result = await agent.run("Clean up old reports", on_event=reviewer, gates=gates)
    print("observation:", model.requests[2].messages[-1].content.splitlines()[0])
    print("answer:", result.answer)
    print("still there:", (FOLDER / "report-2023.txt").exists())


if __name__ == "__main__":
    asyncio.run(main())
