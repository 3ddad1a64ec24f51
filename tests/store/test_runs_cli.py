"""`loopwright runs ...` and `loopwright run --store/--continue` on a real SQLite store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_helpers import TOOLS_FILE, line_script, line_spec, lines, recorded_run, write_script

from loopwright.cli import main
from loopwright.events import SCHEMA_VERSION, decode_event
from loopwright.store import SqliteRunStore


def run_args(folder: Path, script: Path, store: Path, *extra: str) -> list[str]:
    return [
        "run",
        "write lines",
        "--model",
        f"scripted:{script}",
        "--tools",
        f"{TOOLS_FILE}:append_line",
        "--workspace",
        str(folder),
        "--store",
        str(store),
        "--json",
        *extra,
    ]


def stored_run(folder: Path, store: Path, count: int = 2, *extra: str) -> str:
    script = write_script(folder, line_script(folder / "lines.txt", count))
    main(run_args(folder, script, store, *extra))
    return SqliteRunStore(store).list_runs()[0].run_id


def test_run_stores_every_event_and_runs_list_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.db"
    run_id = stored_run(tmp_path, store, 2, "--tenant", "acme")
    printed = [decode_event(line) for line in capsys.readouterr().out.splitlines()]
    assert [e.seq for e in SqliteRunStore(store).events(run_id)] == [e.seq for e in printed]

    assert main(["runs", "list", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert run_id in out and "completed" in out and "acme" in out
    assert main(["runs", "list", "--store", str(store), "--tenant", "acme", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["run_id"] == run_id and row["answer"] == "2 lines"
    assert main(["runs", "list", "--store", str(store), "--status", "stopped", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["runs", "list", "--store", str(store), "--tenant", "beta"]) == 0
    assert capsys.readouterr().out.strip() == "no runs"


def test_runs_show_prints_every_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "runs.db"
    run_id = stored_run(tmp_path, store, 1)
    capsys.readouterr()
    assert main(["runs", "show", run_id, "--store", str(store)]) == 0
    out = capsys.readouterr().out
    for kind in (
        "run_started",
        "model_response",
        "tool_call_started",
        "tool_call ",
        "run_finished",
    ):
        assert kind in out
    assert "append_line ok: appended 'line 1'" in out
    assert main(["runs", "show", run_id, "--store", str(store), "--json"]) == 0
    events = [decode_event(line) for line in capsys.readouterr().out.splitlines()]
    assert [e.seq for e in events] == list(range(1, 9))


def test_an_unknown_run_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for action in ("show", "resume", "replay", "export"):
        assert main(["runs", action, "run_nope", "--store", str(tmp_path / "r.db")]) == 2
        assert "no run 'run_nope'" in capsys.readouterr().err


def test_runs_resume_continues_at_the_reply_where_the_run_left_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = line_spec(tmp_path, 3)
    events = recorded_run(spec, run_id="r_cut")
    (tmp_path / "lines.txt").write_text("line 1\n")  # what the first process had done
    store = tmp_path / "runs.db"
    SqliteRunStore(store).append_many(events[:6])  # died after its first tool call
    assert main(["runs", "list", "--store", str(store), "--status", "interrupted"]) == 0
    assert "r_cut" in capsys.readouterr().out

    assert main(["runs", "resume", "r_cut", "--store", str(store), "--json"]) == 0
    resumed = [decode_event(line) for line in capsys.readouterr().out.splitlines()]
    assert resumed[0].seq == 7 and resumed[-1].type == "run_finished"
    assert lines(tmp_path / "lines.txt") == ["line 1", "line 2", "line 3"]
    stored = SqliteRunStore(store).events("r_cut")
    assert [e.seq for e in stored] == list(range(1, len(events) + 1))
    assert main(["runs", "resume", "r_cut", "--store", str(store)]) == 2
    assert "already ended (completed)" in capsys.readouterr().err


def test_runs_resume_is_refused_while_another_process_holds_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = recorded_run(line_spec(tmp_path, 1), run_id="r_held")
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append_many(events[:3])
    assert store.acquire_lease("r_held", "other-host:4242:abc", 3600)
    assert main(["runs", "resume", "r_held", "--store", str(store.path)]) == 1
    err = capsys.readouterr().err
    assert "r_held is being executed by other-host:4242:abc" in err


def test_run_continue_follows_up_a_stopped_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.db"
    stopped = stored_run(tmp_path, store, 1, "--max-iterations", "1", "--no-last-turn")
    record = SqliteRunStore(store).get_run(stopped)
    assert record is not None and record.status == "stopped"
    capsys.readouterr()

    more = tmp_path / "more.json"
    more.write_text(json.dumps([json.dumps({"final_answer": "all lines written"})]))
    code = main(
        ["run", "--continue", stopped, "--model", f"scripted:{more}", "--store", str(store)]
    )
    assert code == 0
    follow_up = SqliteRunStore(store).list_runs()[0]
    assert follow_up.parent_run_id == stopped and follow_up.status == "completed"
    assert "Continue an unfinished task" in follow_up.request
    assert "append_line" in follow_up.request  # the work already done
    assert main(["run", "--continue", follow_up.run_id, "--store", str(store)]) == 2
    assert "is completed, not stopped" in capsys.readouterr().err


def test_runs_export_is_one_json_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.db"
    run_id = stored_run(tmp_path, store, 1)
    capsys.readouterr()
    assert main(["runs", "export", run_id, "--store", str(store)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["format"] == "loopwright.run/1"
    assert document["run"]["status"] == "completed"
    assert [e["seq"] for e in document["events"]] == list(range(1, 9))
    assert all(e["v"] == SCHEMA_VERSION for e in document["events"])
