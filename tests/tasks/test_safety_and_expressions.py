"""Safety operations (classify, back up, undo), safe expressions, keyword matching, GateBroker."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from task_helpers import count_lines, write_text

from loopwright.errors import TaskMatchError, TaskRunError
from loopwright.safety.operations import (
    ChangeEntry,
    OperationSafety,
    Snapshot,
    before_operation,
    classify_operation,
    execute_undo,
)
from loopwright.tasks import GateBroker, TaskDefinition
from loopwright.tasks._expressions import ExpressionProblem, compile_expression, render_template
from loopwright.tasks._matching import choose_task
from loopwright.tools import Tool


def noop(mode: str = "") -> None:
    """Do nothing.

    Args:
        mode: ignored
    """


DESTROY = Tool.from_function(noop, name="drop_table", effect="destructive")


@pytest.mark.parametrize(
    "tool, arguments, expected",
    [
        (count_lines, {"path": "x"}, "read"),
        (write_text, {"path": "x", "content": ""}, "write"),
        (write_text, {"path": "x", "dry_run": True}, "read"),
        (write_text, {"path": "x", "action": "Delete"}, "destructive"),
        (write_text, {"path": "x", "force": True}, "destructive"),
        (DESTROY, {}, "destructive"),
    ],
)
def test_classify_operation(tool: Tool, arguments: dict[str, Any], expected: str) -> None:
    assert classify_operation(tool, arguments) == expected


def safety(tmp_path: Path, hooks: Mapping[str, Any] | None = None) -> OperationSafety:
    (tmp_path / "ws").mkdir(exist_ok=True)
    return OperationSafety(tmp_path / "ws", tmp_path / "backups", snapshot_hooks=hooks or {})


def test_backup_then_undo_in_reverse_restores_files(tmp_path: Path) -> None:
    rules = safety(tmp_path)
    target = rules.workspace / "a.bin"
    target.write_bytes(b"\x00original\xff")
    log = before_operation(write_text, {"path": "a.bin"}, rules, step="one", now=1.0)
    target.write_bytes(b"first change")
    log += before_operation(write_text, {"path": "a.bin"}, rules, step="two", now=2.0)
    target.write_bytes(b"second change")
    log += before_operation(write_text, {"path": "b.txt"}, rules, step="three")
    (rules.workspace / "b.txt").write_text("new")
    assert [e.action for e in log] == ["modify", "modify", "create"]
    outcomes = execute_undo(log, rules)
    assert all(o.ok for o in outcomes)
    assert [o.entry.step for o in outcomes] == ["three", "two", "one"]
    assert target.read_bytes() == b"\x00original\xff"
    assert not (rules.workspace / "b.txt").exists()


def test_backup_refuses_paths_outside_the_workspace(tmp_path: Path) -> None:
    with pytest.raises(TaskRunError, match="cannot back up"):
        before_operation(write_text, {"path": "../escape.txt"}, safety(tmp_path))


class ConfigSnapshots:
    """A snapshot hook for a 'config' held in memory (a stand-in for a remote API)."""

    resource_type = "config"

    def __init__(self) -> None:
        self.config = {"mode": "old"}
        self.saved: dict[str, dict[str, str]] = {}

    def snapshot(self, tool_name: str, arguments: Mapping[str, Any], backup_dir: Path) -> Snapshot:
        self.saved["main"] = dict(self.config)
        return Snapshot("main", None)

    def restore(self, entry: ChangeEntry) -> None:
        self.config = dict(self.saved[entry.resource_id])


def test_non_file_tools_use_a_snapshot_hook(tmp_path: Path) -> None:
    hook = ConfigSnapshots()
    push = Tool.from_function(noop, name="push_config", effect="write")
    rules = safety(tmp_path, {"push_config": hook})
    log = before_operation(push, {"mode": "new"}, rules, step="push")
    hook.config["mode"] = "new"
    assert log[0].action == "snapshot" and log[0].resource_type == "config"
    assert execute_undo(log, rules)[0].ok
    assert hook.config == {"mode": "old"}


def test_undo_reports_a_missing_backup_and_goes_on(tmp_path: Path) -> None:
    rules = safety(tmp_path)
    (rules.workspace / "new.txt").write_text("x")
    log = [
        ChangeEntry("create", "file", str(rules.workspace / "new.txt"), None, 0.0),
        ChangeEntry("modify", "file", str(rules.workspace / "gone.txt"), "/nowhere", 0.0),
    ]
    first, second = execute_undo(log, rules)
    assert not first.ok and "backup" in first.message
    assert second.ok and not (rules.workspace / "new.txt").exists()


SCOPE = {
    "inputs": {"env": "staging", "n": 3},
    "results": {"scan": {"hits": [{"id": "a"}], "count": 1}, "skipped": None},
    "request": "rotate keys",
}


@pytest.mark.parametrize(
    "source, expected",
    [
        ("inputs.env == 'staging' and results.scan.count >= 1", True),
        ("not (inputs.n < 2 or inputs.env in ['prod', 'production'])", True),
        ("results.scan.hits[0].id == 'a'", True),
        ("results.scan['count'] == -1", False),
        ("results.skipped == null", True),
        ("results.scan.missing is None", True),
        ("'keys' in request", True),
        ("1 < inputs.n < 3", False),
    ],
)
def test_conditions_evaluate_safely(source: str, expected: bool) -> None:
    assert compile_expression(source).evaluate(SCOPE) is expected


@pytest.mark.parametrize(
    "source", ["(lambda: 1)()", "inputs.__class__.__mro__", "[x for x in inputs]", "open('f')"]
)
def test_code_is_never_run(source: str) -> None:
    try:
        expression = compile_expression(source)
    except ExpressionProblem:
        return
    # attribute names are dict keys, never Python attributes
    assert expression.evaluate(SCOPE) is None


def test_strict_paths_and_templates() -> None:
    with pytest.raises(TaskRunError, match=r"results.scan.hits\[5\] does not exist"):
        compile_expression("results.scan.hits[5]", path_only=True).evaluate(SCOPE, strict=True)
    with pytest.raises(TaskRunError, match="cannot evaluate"):
        compile_expression("inputs.env > 3").evaluate(SCOPE)
    text = render_template("{inputs.env}: {results.scan.count} hit(s), {inputs.nope}", SCOPE)
    assert text == "staging: 1 hit(s), ?"


def tasks() -> list[TaskDefinition]:
    return [
        TaskDefinition("rotate-keys", trigger_keywords=("rotate", "keys", "api key")),
        TaskDefinition("release-notes", trigger_keywords=("release notes", "release")),
    ]


def test_keywords_choose_a_task_and_say_why() -> None:
    match = choose_task("Please rotate the staging keys and the API key", tasks())
    assert match.task.name == "rotate-keys"
    assert match.matched == ("rotate", "keys", "api key")
    assert "'rotate'" in match.explanation


def test_no_match_or_a_tie_is_an_error_not_a_guess() -> None:
    with pytest.raises(TaskMatchError, match="no task matches"):
        choose_task("make coffee", tasks())
    with pytest.raises(TaskMatchError, match="equally well"):
        choose_task("release the keys", tasks())
    # 'keyset' does not count as 'keys': whole words only
    with pytest.raises(TaskMatchError):
        choose_task("keyset", tasks())


async def test_gate_broker_decides_from_another_thread() -> None:
    broker = GateBroker()
    gate = broker.open("run_1", "approve", "ok?", 5.0)
    broker.open("run_2", "other", "ok?", 5.0)
    assert [g.step for g in broker.pending("run_1")] == ["approve"]
    assert len(broker.pending()) == 2
    worker = threading.Thread(target=broker.resolve, args=(gate.request_id, True, "api"))
    worker.start()
    await asyncio.wait_for(gate.event.wait(), 5)
    worker.join()
    assert gate.approved is True and gate.decided_by == "api"
    assert not broker.resolve(gate.request_id, False, "again")
    assert not broker.resolve("gate_unknown", True, "x")
