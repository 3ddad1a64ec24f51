"""Run ids on the command line: a unique prefix is enough wherever a run id is taken, an
ambiguous one names the runs it matches, and `runs list` shows ids that can be pasted."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import sys
from pathlib import Path

import pytest
from store_helpers import line_spec, lines, recorded_run, write_script

from loopwright.cli import main
from loopwright.events import RunStartedEvent
from loopwright.store import SqliteRunStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_helpers import cli_env, cli_tty


def _store(tmp_path: Path, *run_ids: str, cut: bool = False) -> Path:
    """A store with a finished run of each id (with `cut`, the last stops after its first
    tool call, as a killed process leaves it)."""
    path = tmp_path / "runs.db"
    store = SqliteRunStore(path)
    for run_id in run_ids:
        events = recorded_run(line_spec(tmp_path, 2), run_id=run_id)
        store.append_many(events[:6] if cut and run_id == run_ids[-1] else events)
    store.close()
    return path


def test_a_unique_prefix_finds_the_run_in_every_runs_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(_store(tmp_path, "run_5e1f00aa11", "run_5e2200bb22"))
    assert main(["runs", "show", "run_5e1", "--store", store]) == 0
    assert capsys.readouterr().out.startswith("run run_5e1f00aa11 · agent · completed")
    assert main(["runs", "export", "run_5e22", "--store", store]) == 0
    assert json.loads(capsys.readouterr().out)["run"]["run_id"] == "run_5e2200bb22"
    assert main(["runs", "replay", "run_5e1f", "--store", store]) == 0
    assert "run run_5e1f00aa11: replayed" in capsys.readouterr().out
    # as `runs list` cuts an id on a narrow terminal, with the ellipsis copied along
    assert main(["runs", "show", "run_5e2200…", "--store", store, "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["run_id"] == "run_5e2200bb22"
    assert main(["runs", "approve", "run_5e22", "--store", store]) == 2
    assert "run run_5e2200bb22 has no gate waiting" in capsys.readouterr().err


def test_an_ambiguous_prefix_names_the_runs_it_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(_store(tmp_path, "run_5e1f00aa11", "run_5e2200bb22"))
    for argv in (["runs", "show", "run_5e"], ["runs", "follow", "run_5"], ["task", "approve", "run_"],
                 ["runs", "resume", "run_5e"], ["run", "--continue", "run_5e"]):  # fmt: skip
        assert main([*argv, "--store", store]) == 2, argv
        err = capsys.readouterr().err
        assert "is the start of several runs' ids: run_5e1f00aa11, run_5e2200bb22" in err, argv
        assert "give more of it" in err and "Traceback" not in err
    assert main(["runs", "show", "run_9", "--store", store]) == 2
    assert "no run 'run_9'" in capsys.readouterr().err


def test_resume_and_continue_take_a_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(_store(tmp_path, "run_77aa00", cut=True))
    (tmp_path / "lines.txt").write_text("line 1\n")  # what the killed process had done
    assert main(["runs", "resume", "run_77", "--store", store, "--json"]) == 0
    assert lines(tmp_path / "lines.txt") == ["line 1", "line 2"]
    capsys.readouterr()
    more = write_script(tmp_path, [json.dumps({"final_answer": "nothing left"})])
    code = main(["run", "--continue", "run_77a", "--model", f"scripted:{more}", "--store", store])
    assert code == 2  # the prefix found the run; a completed run is not followed up
    assert "run_77aa00 is completed, not stopped" in capsys.readouterr().err


@pytest.mark.subprocess
def test_runs_list_at_80_columns_shows_whole_ids_and_the_parent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a terminal the request gives way, never an id; a sub-agent's lead is named."""
    lead, child = "run_1ead00000000aaaa", "run_c41d00000000bbbb"
    store = SqliteRunStore(tmp_path / "runs.db")
    for run_id, parent in ((lead, None), (child, lead)):
        started, *rest = recorded_run(line_spec(tmp_path, 1), run_id=run_id)
        assert isinstance(started, RunStartedEvent)
        store.append_many([dataclasses.replace(started, parent_run_id=parent), *rest])
    store.close()
    env = cli_env(tmp_path, LOOPWRIGHT_STORE=str(tmp_path / "runs.db"))
    for columns in (80, 120):
        shown = cli_tty("runs", "list", home=tmp_path, env=env, columns=columns)
        assert shown.code == 0, shown.out
        assert lead in shown.out and child in shown.out
        assert max(len(line) for line in shown.out.splitlines()) <= columns
        [row] = [line for line in shown.out.splitlines() if child in line]
        assert lead in row if columns == 120 else f"↳ {lead}" in shown.out
    assert main(["runs", "list", "--store", str(tmp_path / "runs.db")]) == 0
    piped = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert piped[0] == ["run", "status", "kind", "tenant", "started", "parent", "request"]
    assert [(row[0], row[5]) for row in piped[1:]] == [(child, lead), (lead, "")]


def test_the_leads_timeline_names_its_sub_agents_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    store = str(tmp_path / "runs.db")
    code = main(["run", "How tall is Mont Blanc?", "--store", store, "--json",
                 "--model", f"scripted:{examples / 'subagents_lead.json'}",
                 "--tools", f"{examples / 'subagents.py'}:research"])  # fmt: skip
    assert code == 0
    capsys.readouterr()
    [child, lead] = SqliteRunStore(store).list_runs()
    assert child.parent_run_id == lead.run_id
    assert main(["runs", "show", lead.run_id, "--store", store]) == 0
    [call] = [line for line in capsys.readouterr().out.splitlines() if "tool_call_started" in line]
    assert call.endswith(f"→ sub-agent run {child.run_id}")
    assert main(["runs", "show", child.run_id, "--store", store]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert f"sub-agent of run {lead.run_id} (call " in header


def test_a_store_that_cannot_be_used_is_a_set_up_error_not_a_failed_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit status 2 and what to do, for every command that opens the store."""
    newer = tmp_path / "newer.db"
    SqliteRunStore(newer).close()
    with sqlite3.connect(newer) as conn:
        conn.execute("PRAGMA user_version = 999")
    for argv in (["runs", "list"], ["runs", "show", "run_1"], ["store", "migrate"],
                 ["task", "approve", "run_1"], ["run", "hi", "--model", "scripted:x.json"]):  # fmt: skip
        assert main([*argv, "--store", str(newer)]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("loopwright: error: ") and "run failed" not in err, argv
        assert "written by a newer loopwright" in err and "upgrade loopwright" in err
