"""Replay: a stored run is a regression test; a changed prompt or tool shows a divergence."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from store_helpers import TOOLS_FILE, line_spec, lines, recorded_run

from inprocess_cli import CliRun
from loopwright import AgentExecutor
from loopwright.cli import main
from loopwright.models import Model
from loopwright.runtime import RunSpec, replay_run
from loopwright.store import SqliteRunStore
from loopwright.tools import resolve_tools


def stored(tmp_path: Path, spec: RunSpec, run_id: str) -> SqliteRunStore:
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append_many(recorded_run(spec, run_id=run_id))
    return store


def test_replaying_a_stored_run_reports_no_divergence_and_runs_no_tool(tmp_path: Path) -> None:
    store = stored(tmp_path, line_spec(tmp_path, 3), "r_same")
    (tmp_path / "lines.txt").unlink()
    report = asyncio.run(replay_run(store, "r_same"))
    assert report.ok, report.describe()
    assert report.events == len(store.events("r_same"))
    assert lines(tmp_path / "lines.txt") == []  # replay served the recorded tool results


def test_a_deliberately_changed_prompt_shows_the_divergence_and_its_step(tmp_path: Path) -> None:
    store = stored(tmp_path, line_spec(tmp_path, 2), "r_changed")

    def changed_prompt(spec: RunSpec, model: Model) -> AgentExecutor:
        tools = resolve_tools(list(spec.tools))
        return AgentExecutor(model, tools, options=spec.options,
                             system_prompt="You are a different agent now.")  # fmt: skip

    report = asyncio.run(replay_run(store, "r_changed", build=changed_prompt))
    assert not report.ok and report.divergence is not None
    assert report.divergence.seq == 3 and report.iteration == 1  # the first model call
    assert "model request" in report.divergence.expected
    assert report.divergence.expected != report.divergence.actual
    assert "(iteration 1)" in report.describe()


def test_runs_replay_cli_passes_then_fails_after_a_tool_changes(
    tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    tools_file = tmp_path / "my_tools.py"
    shutil.copy(TOOLS_FILE, tools_file)
    spec = line_spec(tmp_path, 2)
    spec = RunSpec.from_dict({**spec.to_dict(), "tools": [f"{tools_file}:append_line"]})
    stored(tmp_path, spec, "r_cli")
    store_arg = ["--store", str(tmp_path / "runs.db")]
    passed = run_cli("runs", "replay", "r_cli", *store_arg)
    assert passed.code == 0, passed.err
    assert "replayed 12 events, no divergence" in passed.out

    text = tools_file.read_text().replace("Append one line of text", "Append a line of prose")
    tools_file.write_text(text)  # the tool's description (part of the prompt) changed
    done = run_cli("runs", "replay", "r_cli", *store_arg)  # the tool file is read anew
    assert done.code == 1, done.err
    assert "diverged at event 3: recorded model request" in done.out
    assert "(iteration 1)" in done.out


def test_an_unfinished_run_is_not_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append_many(recorded_run(line_spec(tmp_path, 1), run_id="r_open")[:4])
    assert main(["runs", "replay", "r_open", "--store", store.path]) == 2
    assert "has not finished (interrupted): resume it first" in capsys.readouterr().err


HANGING_TOOLS = '''
import asyncio
import json
from pathlib import Path
from loopwright import tool

@tool(idempotent=True)
async def wait_forever(marker: str) -> str:
    """Leave a mark, then wait for something that never comes.

    Args:
        marker: the file to append a mark to
    """
    with open(marker, "a") as file:
        file.write("called\\n")
    await asyncio.Event().wait()
    return "never"
'''


def test_a_run_its_wall_clock_stopped_replays_without_divergence_or_tool_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The clock cut a call off (0.5 s): the replay meets the stop there again instead of
    reporting it, and does not call the (idempotent) tool whose result was never recorded."""
    tools = tmp_path / "hang.py"
    tools.write_text(HANGING_TOOLS)
    marker = tmp_path / "marks.txt"
    reply = {"thought": "wait", "action": "wait_forever", "action_input": {"marker": str(marker)}}
    script = tmp_path / "script.json"
    script.write_text(json.dumps([json.dumps(reply)]))
    store = str(tmp_path / "runs.db")
    code = main(["run", "wait", "--model", f"scripted:{script}", "--tools",
                 f"{tools}:wait_forever", "--timeout", "0.5", "--store", store, "--json"])  # fmt: skip
    assert code == 1
    [run] = SqliteRunStore(store).list_runs()
    assert (run.status, run.reason) == ("stopped", "timeout")
    capsys.readouterr()
    assert main(["runs", "replay", run.run_id, "--store", store]) == 0
    assert f"✓ run {run.run_id}: replayed" in capsys.readouterr().out
    assert lines(marker) == ["called"]  # only by the run itself
