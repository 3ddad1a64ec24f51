"""The task of the task crash tests: six tool steps that each append one line to a file,
`append_line` (not idempotent) and `put_line` (idempotent) in turn, with a gate in the
middle (crash_tools.py)."""

from __future__ import annotations

import json
from pathlib import Path

from loopwright.tasks import TaskSpec

TOOLS_FILE = Path(__file__).parent / "crash_tools.py"
STEPS = [
    ("line1", "append_line"),
    ("line2", "put_line"),
    ("approve", "gate"),
    ("line3", "append_line"),
    ("line4", "put_line"),
    ("line5", "append_line"),
    ("line6", "put_line"),
]
TOOL_STEPS = [(name, tool) for name, tool in STEPS if tool != "gate"]


def task_file(folder: Path) -> Path:
    lines = folder / "lines.txt"
    steps = []
    for name, tool in STEPS:
        if tool == "gate":
            steps.append(f"  - name: {name}\n    type: gate\n    message_template: Go on?\n")
            continue
        text = f"line {name[-1]}"
        steps.append(
            f"  - name: {name}\n    type: tool\n    tool: {tool}\n"
            f"    args: {{path: {json.dumps(str(lines))}, text: {json.dumps(text)}}}\n"
        )
    path = folder / "lines.yaml"
    path.write_text(
        f"name: lines\ntools: [{json.dumps(str(TOOLS_FILE))}]\nsteps:\n{''.join(steps)}"
    )
    return path


def task_spec(folder: Path) -> TaskSpec:
    """The task as a run spec: one explicit gate, the write steps not gated each."""
    return TaskSpec(
        task_file=str(task_file(folder)),
        request="write six lines",
        workspace=str(folder),
        state_root=str(folder / "state"),
        gate_timeout_s=120,
        auto_gate=False,
    )
