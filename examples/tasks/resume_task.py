"""Kill a task run while its gate waits, resume it, approve the gate: nothing is done twice.

    python examples/tasks/resume_task.py

1. `loopwright task run` starts in a child process, with no terminal and no `--yes`: its
   first step appends a note to a file, then a gate waits for approval. The child is
   killed with SIGKILL while the gate waits.
2. The store shows the run as `interrupted` (its process is gone).
3. The run is resumed in this process from nothing but its events (`Runtime.resume`): the
   first step is not run again (its result is in the log), and the gate waits again, with
   the same id. `loopwright task approve RUN_ID` (another process) approves it through the
   store, and the run goes on to its last step.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from loopwright import tool
from loopwright.events import FunctionResultEvent, GateDecisionEvent, decode_event
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.tasks import GateBroker


@tool(effect="write", idempotent=False)
def append_note(path: str, text: str) -> str:
    """Append a note to a file.

    Args:
        path: the notes file
        text: the note
    """
    with open(path, "a", encoding="utf-8") as notes:
        notes.write(text + "\n")
    return f"noted {text!r}"


def task_file(folder: Path) -> Path:
    notes = json.dumps(str(folder / "notes.txt"))
    tools = json.dumps(f"{Path(__file__).resolve()}:append_note")
    path = folder / "notes.yaml"
    path.write_text(
        f"name: notes\ntools: [{tools}]\nsteps:\n"
        f"  - {{name: first, type: tool, tool: append_note, args: {{path: {notes}, text: one}}}}\n"
        "  - {name: approve, type: gate, message_template: 'Write the second note?'}\n"
        f"  - {{name: second, type: tool, tool: append_note, args: {{path: {notes}, text: two}}}}\n"
    )
    return path


def start_and_kill(folder: Path, store: Path) -> str:
    """Run the task in a child process; kill it while its gate waits."""
    command = [sys.executable, "-m", "loopwright", "task", "run", str(task_file(folder)),
               "--json", "--store", str(store), "--workspace", str(folder),
               "--state-dir", str(folder / "state")]  # fmt: skip
    # `first` is a write step with no gate before it: `task run` gates it; this example
    # approves that one from the store as soon as it asks, and kills at the second gate
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert child.stdout is not None
    run_id = ""
    for line in child.stdout:
        event = decode_event(line)
        run_id = event.run_id
        if event.type == "confirmation_required" and event.step == "first":
            approve(run_id, store)
        elif event.type == "confirmation_required":
            break  # the gate `approve` waits: kill the process now
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    return run_id


def approve(run_id: str, store: Path) -> None:
    """What a person does from another shell."""
    command = [sys.executable, "-m", "loopwright", "task", "approve", run_id,
               "--store", str(store), "--by", "alice"]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True)


async def resume(store: SqliteRunStore, store_path: Path, run_id: str) -> str:
    gates = GateBroker(store, poll_s=0.05)  # decisions made in another process, via the store
    runtime = Runtime(store, gates=gates)
    try:
        run = await runtime.resume(run_id)  # this process holds the run now
        while not gates.pending(run_id):  # the resumed run reaches its gate again
            await asyncio.wait({run.task}, timeout=0.05)
        print(f"the gate {gates.pending(run_id)[0].request_id} waits again")
        await asyncio.to_thread(approve, run_id, store_path)
        state = await run.wait()
    finally:
        runtime.close()
    return str(state.status)


def main(folder: Path) -> int:
    store_path = folder / "runs.db"
    run_id = start_and_kill(folder, store_path)
    store = SqliteRunStore(store_path)
    record = store.get_run(run_id)
    assert record is not None
    print(f"killed {run_id} while its gate waited; the store says: {record.status}")
    status = asyncio.run(resume(store, store_path, run_id))
    events = store.events(run_id)
    print(f"resumed: {status}")
    for event in events:
        if isinstance(event, FunctionResultEvent):
            print(f"  step {event.step}: {event.result}")
        elif isinstance(event, GateDecisionEvent):
            print(f"  gate of {event.step}: approved by {event.decided_by}")
    notes = (folder / "notes.txt").read_text().splitlines()
    print(f"notes.txt: {', '.join(notes)}")
    store.close()
    return 0 if status == "completed" and notes == ["one", "two"] else 1


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="loopwright-resume-task-") as tmp:
        sys.exit(main(Path(tmp)))
