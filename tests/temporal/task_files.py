"""Task files of the Temporal task-run tests (written into each test's folder)."""

from __future__ import annotations

from pathlib import Path

from temporal_helpers import TOOLS_FILE

GATED = """\
name: gated-append
description: Look, ask, then append a line.
tools: [{tools}]
inputs:
  out: null
steps:
  - name: look
    type: tool
    tool: big
    args: {{size: 12}}
  - name: approve
    type: gate
    message_template: "Append to {{inputs.out}}?"
    timeout_s: {timeout}
  - name: write
    type: tool
    tool: append_line
    args_from: {{path: inputs.out}}
    args: {{text: after-the-gate}}
"""


def gated_task(folder: Path, *, timeout: float = 300) -> Path:
    """look (a read), a gate, then one append_line to inputs.out (backed up first)."""
    path = folder / "gated.yaml"
    path.write_text(GATED.format(tools=TOOLS_FILE, timeout=timeout), encoding="utf-8")
    return path


TWO_GATES = (
    GATED
    + """\
  - name: confirm
    type: gate
    message_template: "Append once more?"
  - name: write_more
    type: tool
    tool: append_line
    args_from: {{path: inputs.out}}
    args: {{text: after-the-second-gate}}
"""
)


def two_gates_task(folder: Path) -> Path:
    """`gated_task`, then a second gate and a second append_line."""
    path = folder / "two-gates.yaml"
    path.write_text(TWO_GATES.format(tools=TOOLS_FILE, timeout=300), encoding="utf-8")
    return path


FAILS = """\
name: write-then-fail
tools: [{tools}]
inputs:
  out: null
steps:
  - name: write
    type: tool
    tool: append_line
    args_from: {{path: inputs.out}}
    args: {{text: to-be-undone}}
  - name: fail
    type: tool
    tool: big
    args: {{size: not-a-number}}
"""


def failing_task(folder: Path) -> Path:
    """A backed-up append_line (after its automatic gate), then a step that fails."""
    path = folder / "fails.yaml"
    path.write_text(FAILS.format(tools=TOOLS_FILE), encoding="utf-8")
    return path
