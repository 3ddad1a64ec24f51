"""§1 of the hardening review: a tool that declares nothing is never re-run on resume.

A plain function loaded with `--tools file.py:fn` appends lines to a file; the process is
SIGKILLed while the second call hangs after its effect, then the run is resumed from the
store. The line must be written once, and the model told the effect is unknown.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from mcp.types import ToolAnnotations

from loopwright.events import RunFinishedEvent, ToolCallEvent
from loopwright.mcp import MCPConnections
from loopwright.mcp._connections import declaration_from_annotations
from loopwright.runtime import resume_run
from loopwright.store import SqliteRunStore
from loopwright.tools import Tool, resolve_tools

PLAIN = Path(__file__).parent / "plain_tools.py"
CALLS = 4


def plain(x: int) -> int:
    """Double a number.

    Args:
        x: the number
    """
    return 2 * x


def test_a_plain_function_or_bare_tool_is_unknown_and_not_idempotent() -> None:
    for built in (Tool.from_function(plain), *resolve_tools([f"{PLAIN}:append_plain"])):
        assert (built.effect, built.idempotent) == ("unknown", False)
    declared = Tool.from_function(plain, effect="read")
    assert (declared.effect, declared.idempotent) == ("read", True)
    assert Tool.from_function(plain, effect="write").idempotent is False


@pytest.mark.parametrize(
    ("annotations", "declaration"),
    [
        (None, ("unknown", False)),
        (ToolAnnotations(title="just a title"), ("unknown", False)),
        (ToolAnnotations(read_only_hint=True), ("read", True)),
        (ToolAnnotations(destructive_hint=True), ("destructive", False)),
        (ToolAnnotations(destructive_hint=False, idempotent_hint=True), ("write", True)),
        (ToolAnnotations(idempotent_hint=True), ("unknown", True)),
        (SimpleNamespace(readOnlyHint=True), ("read", True)),  # camelCase attributes too
    ],
)
def test_mcp_annotations_map_to_the_declaration(
    annotations: object, declaration: tuple[str, bool]
) -> None:
    assert declaration_from_annotations(annotations) == declaration


def _script(folder: Path) -> Path:
    replies = [
        json.dumps(
            {
                "thought": f"line {i}",
                "action": "append_plain",
                "action_input": {"path": str(folder / "lines.txt"), "text": f"line {i}"},
            }
        )
        for i in range(1, CALLS + 1)
    ]
    replies.append(json.dumps({"thought": "done", "final_answer": "written"}))
    script = folder / "script.json"
    script.write_text(json.dumps(replies))
    return script


@pytest.mark.subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_plain_function_killed_after_its_effect_is_not_run_again(tmp_path: Path) -> None:
    argv = [
        sys.executable, "-m", "loopwright", "run", "write lines",
        "--model", f"scripted:{_script(tmp_path)}",
        "--tools", f"{PLAIN}:append_plain",
        "--store", str(tmp_path / "runs.db"),
        "--workspace", str(tmp_path),
        "--max-iterations", str(CALLS + 2),
        "--json",
    ]  # fmt: skip
    env = {**os.environ, "LOOPWRIGHT_TEST_HANG_AFTER": "line 2"}
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    for line in proc.stderr:  # the tool says so once its line is written
        if b"hanging after line 2" in line or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    written = (tmp_path / "lines.txt").read_text().splitlines()
    assert written == ["line 1", "line 2"]

    store = SqliteRunStore(tmp_path / "runs.db")
    try:
        [record] = store.list_runs(status="interrupted")
        result = asyncio.run(resume_run(store, record.run_id))
        assert result.success, result
        events = store.events(record.run_id)
    finally:
        store.close()
    assert (tmp_path / "lines.txt").read_text().splitlines() == [
        f"line {i}" for i in range(1, CALLS + 1)
    ]  # line 2 once: the interrupted call was not repeated
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert calls[1].is_error and "effect is unknown" in calls[1].result
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "completed"


@pytest.mark.subprocess
async def test_a_real_mcp_servers_annotations_become_declarations() -> None:
    server = Path(__file__).parents[2] / "examples" / "mcp_server.py"
    target = f"{sys.executable} {server}"
    async with MCPConnections([target], trusted=[target]) as connections:
        declared = {t.name: (t.effect, t.idempotent) for t in connections.tools()}
    assert declared["list_notes"] == ("read", True)
    assert declared["add_note"] == ("write", False)
    assert declared["slow"] == ("unknown", False)  # no annotations: never re-run on resume
