"""`loopwright chat`: each line of input a turn (a run of its own, after the turn before),
`/new`, `/runs`, `/quit` and the end of input; `--after RUN_ID` takes a stored conversation
up. The real CLI as a program, driven through its stdin; a script file stands in for the
LLM and serves every turn of a chat in order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import cli_process

from loopwright.events import GateDecisionEvent, RunStartedEvent
from loopwright.store import RunRecord, SqliteRunStore

pytestmark = pytest.mark.subprocess


def _script(path: Path, *words: str) -> str:
    replies: list[str] = []
    for word in words:
        replies.append(json.dumps({"action": "echo", "action_input": {"text": word}}))
        replies.append(json.dumps({"final_answer": f"said {word}"}))
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def _runs(home: Path) -> list[RunRecord]:
    store = SqliteRunStore(home / "runs.db")
    try:
        return sorted(store.list_runs(), key=lambda r: r.created_at)
    finally:
        store.close()


def _started(home: Path, run_id: str) -> RunStartedEvent:
    store = SqliteRunStore(home / "runs.db")
    try:
        first = store.events(run_id)[0]
    finally:
        store.close()
    assert isinstance(first, RunStartedEvent)
    return first


def test_each_line_is_a_turn_after_the_one_before(tmp_path: Path) -> None:
    model = _script(tmp_path / "s.json", "one", "two")
    done = cli_process("chat", "--model", model, "--tools", "echo", home=tmp_path,
                       stdin="say one\n\nnow two\n/runs\n/quit\nnever sent\n")  # fmt: skip
    assert done.code == 0, done.err
    first, second = _runs(tmp_path)
    assert (first.answer, second.answer) == ("said one", "said two")
    assert (first.after_run_id, second.after_run_id) == (None, first.run_id)
    assert _started(tmp_path, second.run_id).after_run_id == first.run_id
    listed = [line.split() for line in done.out.splitlines() if line.startswith("  ")]
    assert ["1", first.run_id, "completed", "say", "one"] in listed
    assert ["2", second.run_id, "completed", "now", "two"] in listed
    assert "never sent" not in done.out  # /quit ended the chat


def test_new_starts_another_conversation_and_the_end_of_input_ends_the_chat(
    tmp_path: Path,
) -> None:
    model = _script(tmp_path / "s.json", "one", "two")
    done = cli_process("chat", "--model", model, "--tools", "echo", home=tmp_path,
                       stdin="say one\n/new\n/runs\nsay two\n/bogus\n")  # fmt: skip
    assert done.code == 0, done.err
    _, second = _runs(tmp_path)
    assert second.after_run_id is None
    assert "a new conversation" in done.err
    assert "no turns yet" in done.err
    assert "unknown command /bogus: /new" in done.err


def test_after_takes_a_stored_conversation_up(tmp_path: Path) -> None:
    ran = cli_process("run", "say one", "--model", _script(tmp_path / "a.json", "one"),
                      "--tools", "echo", home=tmp_path)  # fmt: skip
    assert ran.code == 0, ran.err
    [before] = _runs(tmp_path)
    model = _script(tmp_path / "b.json", "two")
    done = cli_process("chat", "--after", before.run_id[:10], "--model", model, home=tmp_path,
                       stdin="now two\n/runs\n")  # fmt: skip
    assert done.code == 0, done.err
    assert f"continuing the conversation of run {before.run_id} (1 turn(s))" in done.err
    _, turn = _runs(tmp_path)
    assert turn.after_run_id == before.run_id
    assert turn.answer == "said two"  # echo: the earlier turn's tools, as it recorded them
    assert f"2  {turn.run_id}" in done.out


def test_a_conversation_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    done = cli_process("chat", "--after", "run_missing", "--model", "scripted:x.json",
                       home=tmp_path, stdin="hi\n")  # fmt: skip
    assert done.code == 2
    [line] = done.err.strip().splitlines()
    assert line.startswith("loopwright: error: no run 'run_missing'"), line


def test_approvals_are_decided_as_run_decides_them(tmp_path: Path) -> None:
    model = _script(tmp_path / "s.json", "one")
    done = cli_process("chat", "--model", model, "--tools", "echo", "--approve", "echo",
                       "--yes", home=tmp_path, stdin="say one\n")  # fmt: skip
    assert done.code == 0, done.err
    [turn] = _runs(tmp_path)
    store = SqliteRunStore(tmp_path / "runs.db")
    try:
        events = store.events(turn.run_id)
        decisions = [e for e in events if isinstance(e, GateDecisionEvent)]
    finally:
        store.close()
    assert [(d.approved, d.decided_by) for d in decisions] == [(True, "--yes")]


def test_what_the_chat_prints_shows_control_characters(tmp_path: Path) -> None:
    model = _script(tmp_path / "s.json", "one")
    done = cli_process("chat", "--model", model, "--tools", "echo", home=tmp_path,
                       stdin="say \x1b[2J one\n/runs\n/\x1b]52;c;eA==\x07\n")  # fmt: skip
    assert done.code == 0, done.err
    assert "\x1b" not in done.out + done.err
    assert "say \\x1b[2J one" in done.out  # /runs: the request, its escape visible
    assert "unknown command /\\x1b]52;c;eA==\\x07" in done.err
