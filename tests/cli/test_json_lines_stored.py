"""Each event is encoded once: the line the store writer made as the event was appended is
the line `--json` prints (the follower hands it to the view with the event), so what
`loopwright run --json` prints is byte for byte what the store holds."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import sqlite3
from pathlib import Path

from cli_helpers import cli, cli_env

from loopwright import AgentExecutor
from loopwright.cli._view import JsonLinesView
from loopwright.events import Event, WarningEvent, encode_event
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


def stored_lines(path: Path, run_id: str | None = None) -> dict[tuple[str, int], str]:
    """Every stored event's line as the store holds it, by (run, seq)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT run_id, seq, data FROM events ORDER BY run_id, seq")
        return {(run, seq): data for run, seq, data in rows if run_id in (None, run)}


def act(name: str, **arguments: str) -> str:
    return json.dumps({"thought": "go", "action": name, "action_input": arguments})


def test_run_json_prints_the_lines_the_store_holds(tmp_path: Path) -> None:
    replies = [act("echo", text=f"line {n}") for n in range(3)]
    replies.append(json.dumps({"thought": "done", "final_answer": "done é ✓"}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    env = cli_env(tmp_path)
    run = cli("run", "echo three lines", "--model", f"scripted:{script}", "--tools", "echo",
              "--json", home=tmp_path, env=env)  # fmt: skip
    assert run.code == 0, run.err
    printed = run.out.splitlines()
    stored = stored_lines(tmp_path / "runs.db")
    assert len(printed) == len(stored) > 10
    assert printed == list(stored.values())  # one run: its events in seq order


async def test_a_run_executing_here_is_followed_with_the_lines_its_writer_stored(
    tmp_path: Path,
) -> None:
    release = asyncio.Event()

    @tool(effect="read")
    async def wait_then_echo(text: str) -> str:
        """Echo the text once released.

        Args:
            text: what to echo
        """
        await release.wait()
        return text

    replies = [act("wait_then_echo", text=f"line {n}") for n in range(3)]
    replies.append(json.dumps({"thought": "done", "final_answer": "done"}))
    agent = AgentExecutor(ScriptedModel(replies), [wait_then_echo])
    path = tmp_path / "runs.db"
    store = SqliteRunStore(path)
    runtime = Runtime(store)
    seen: list[tuple[Event, str | None]] = []
    try:
        handle = runtime.start_agent(agent, "echo", run_id="run_lines")
        async with contextlib.aclosing(runtime.follow_lines("run_lines")) as following:
            async for event, line in following:
                seen.append((event, line))
                release.set()  # the rest of the run comes after the follower's first read
        await asyncio.wait_for(handle.wait(), 30)
    finally:
        release.set()
        runtime.close()
        store.close()
    stored = stored_lines(path, "run_lines")
    assert [(e.run_id, e.seq) for e, _ in seen] == list(stored)
    with_lines = [(event, line) for event, line in seen if line is not None]
    assert with_lines[-1][0].type == "run_finished"  # what was stored after the first read
    assert len(with_lines) >= len(seen) - 4
    assert all(line == stored[(event.run_id, event.seq)] for event, line in with_lines)


def test_the_json_view_prints_the_line_it_is_given_as_it_is() -> None:
    out = io.StringIO()
    view = JsonLinesView(out)
    event = WarningEvent(run_id="run_v", seq=1, ts=1.0, message="m")
    stored = '{"type":"warning","message":"m","run_id":"run_v","seq":1,"ts":1.0,"v":5}'
    assert stored != encode_event(event)  # (the store's own field order, say)
    view.show(event, stored)
    view.show(WarningEvent(run_id="run_v", seq=2, ts=2.0, message="n"))  # no line: encoded
    assert out.getvalue().splitlines() == [
        stored,
        encode_event(WarningEvent(run_id="run_v", seq=2, ts=2.0, message="n")),
    ]
