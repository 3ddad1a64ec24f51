"""Kill a run halfway, then resume it from the run store: nothing that finished is done twice.

    python examples/resume_run.py

1. `loopwright run` starts in a child process: a scripted model asks a tool to append four
   notes to a file, one per step. The tool is declared non-idempotent (appending twice
   writes twice). The child is killed with SIGKILL while the third note is being written.
2. The store shows the run as `interrupted` (its process is gone).
3. The run is resumed in this process from nothing but the store and its id: the two
   finished calls are taken from the log; the third call, started but never finished, is
   not run again: the model is told its effect is unknown; the fourth runs normally.
4. The finished run is replayed against its recorded model replies: no divergence.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loopwright import tool
from loopwright.events import ToolCallEvent, decode_event
from loopwright.runtime import replay_run, resume_run
from loopwright.store import open_store


@tool(effect="write", idempotent=False)
def append_note(path: str, text: str) -> str:
    """Append a note to a file (it takes a moment, like real work).

    Args:
        path: the notes file
        text: the note
    """
    with open(path, "a", encoding="utf-8") as notes:
        notes.write(text + "\n")
    time.sleep(0.5)  # the note is written; its result is not recorded yet
    return f"noted {text!r}"


def script(notes: Path) -> list[str]:
    steps = [
        {"thought": f"note {i}", "action": "append_note",
         "action_input": {"path": str(notes), "text": f"note {i}"}}
        for i in range(1, 5)
    ]  # fmt: skip
    return [json.dumps(step) for step in steps] + [json.dumps({"final_answer": "4 notes"})]


def wait_for_note(notes: Path, text: str, limit_s: float = 30.0) -> None:
    """Return once `text` is in the notes file (the tool has made its effect)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if notes.exists() and text in notes.read_text(encoding="utf-8").splitlines():
            return
        time.sleep(0.01)
    raise SystemExit(f"{text!r} never appeared in {notes}")


def start_and_kill(folder: Path, store: Path) -> str:
    """Run the agent in a child process; kill it once the third call has started."""
    replies = folder / "script.json"
    replies.write_text(json.dumps(script(folder / "notes.txt")))
    tools = f"{Path(__file__).resolve()}:append_note"
    command = [sys.executable, "-m", "loopwright", "run", "Write four notes", "--json",
               "--model", f"scripted:{replies}", "--tools", tools,
               "--store", str(store), "--workspace", str(folder)]  # fmt: skip
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    run_id = ""
    for line in child.stdout:
        event = decode_event(line)
        run_id = event.run_id
        if event.type == "tool_call_started" and event.arguments["text"] == "note 3":
            break
    wait_for_note(folder / "notes.txt", "note 3")  # killed after its effect, mid-call
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    return run_id


def main(folder: Path) -> int:
    store_path = folder / "runs.db"
    run_id = start_and_kill(folder, store_path)
    store = open_store(store_path)
    record = store.get_run(run_id)
    assert record is not None
    print(f"killed {run_id} during its third tool call; the store says: {record.status}")

    result = asyncio.run(resume_run(store, run_id))
    print(f"resumed: {result.status}, answer {result.answer!r}")
    for event in store.events(run_id):
        if isinstance(event, ToolCallEvent):
            print(f"  {event.arguments['text']}: {event.result_summary}")
    notes = (folder / "notes.txt").read_text().splitlines()
    print(f"notes.txt: {', '.join(notes)}")

    report = asyncio.run(replay_run(store, run_id))
    print(f"replay: {report.describe()}")
    store.close()
    return 0 if result.success and report.ok and notes.count("note 1") == 1 else 1


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="loopwright-resume-") as tmp:
        sys.exit(main(Path(tmp)))
