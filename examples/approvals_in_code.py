"""Approvals in code: a run stops `waiting` at a call nobody has decided yet, and goes on
once someone has, in the same process or another.

    python examples/approvals_in_code.py                  # one process: decide from the result
    python examples/approvals_in_code.py start runs.db    # a run that ends waiting, stored
    python examples/approvals_in_code.py decide runs.db RUN_ID GATE_ID [REASON TO REFUSE]

The agent may list the folder freely; `delete_file` (declared `destructive`) needs
approval. With `on_pending="wait"` and nobody to decide, the run does not wait: it ends
`waiting`, and `result.pending_approvals` says which call, with what arguments, and why.
`agent.resume(result, approve=[...])` goes on in this process; with a run store,
`Runtime.approve` leaves the decision and `Runtime.resume_agent` goes on, in any process.
Either way the log is replayed: the listing and the model's replies before the gate are
not made again.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from loopwright import AgentExecutor, Runtime, UsageError, tool
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel

FOLDER = Path(tempfile.mkdtemp(prefix="loopwright-approvals-"))
"""The folder the agent tidies (with a run store: the folder beside the store's file)."""
REPLIES = [
    {"thought": "see what is there", "action": "list_files", "action_input": {}},
    {"thought": "remove the old report", "action": "delete_file",
     "action_input": {"name": "report-2023.txt"}},
    {"thought": "done", "final_answer": "Cleaned up."},
]  # fmt: skip


@tool(effect="read")
def list_files() -> str:
    """List the files of the folder."""
    print("  (list_files runs)")
    return " ".join(sorted(p.name for p in FOLDER.iterdir()))


@tool(effect="destructive")
def delete_file(name: str) -> str:
    """Delete a file of the folder.

    Args:
        name: the file's name
    """
    (FOLDER / name).unlink()
    return f"deleted {name}"


def make_agent() -> AgentExecutor[None, None]:
    """The agent (its scripted model goes on after the replies the run's log served)."""
    replies = [json.dumps(reply) for reply in REPLIES]
    return AgentExecutor(
        ScriptedModel(replies), [list_files, delete_file],
        approve=["destructive"], on_pending="wait",
    )  # fmt: skip


def use_folder_of(store_path: str) -> None:
    global FOLDER
    FOLDER = Path(store_path).resolve().parent / "folder"
    FOLDER.mkdir(exist_ok=True)


async def in_one_process() -> None:
    (FOLDER / "report-2023.txt").write_text("numbers")
    agent = make_agent()
    result = await agent.run("Clean up old reports")
    print("status:", result.status)
    for pending in result.pending_approvals:
        print(f"waiting: {pending.tool_name} {pending.arguments} ({pending.why})")
    gate = result.pending_approvals[0].gate_id
    done = await agent.resume(result, approve=[gate], decided_by="reviewer")
    print("status:", done.status, "| answer:", done.answer)
    print("still there:", (FOLDER / "report-2023.txt").exists())


async def start(store_path: str) -> None:
    use_folder_of(store_path)
    (FOLDER / "report-2023.txt").write_text("numbers")
    runtime = Runtime(SqliteRunStore(store_path))
    try:
        result = await runtime.start_agent(make_agent(), "Clean up old reports").wait()
    finally:
        runtime.close()
    [pending] = result.pending_approvals
    print("status:", result.status)
    print("run:", result.run_id)
    print("gate:", pending.gate_id)
    print(f"waiting: {pending.tool_name} {pending.arguments} ({pending.why})")


async def decide(store_path: str, run_id: str, gate_id: str, refusal: str | None) -> None:
    use_folder_of(store_path)
    runtime = Runtime(SqliteRunStore(store_path))
    try:
        approved = refusal is None
        await runtime.approve(run_id, gate_id, approved, "reviewer", refusal or "")
        handle = await runtime.resume_agent(make_agent(), run_id)
        done = await handle.wait()
    finally:
        runtime.close()
    print("status:", done.status, "| answer:", done.answer)
    print("still there:", (FOLDER / "report-2023.txt").exists())


def main(arguments: list[str]) -> None:
    match arguments:
        case []:
            asyncio.run(in_one_process())
        case ["start", store]:
            asyncio.run(start(store))
        case ["decide", store, run_id, gate_id, *reason]:
            asyncio.run(decide(store, run_id, gate_id, " ".join(reason) or None))
        case _:
            sys.exit(__doc__)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except UsageError as exc:  # a gate the run does not wait at, a run that ended
        sys.exit(f"error: {exc}")
