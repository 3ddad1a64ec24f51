"""The evaluation suite runner, driven by per-task scripts (ScriptedModel)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigurationError
from loopwright.evals import load_suite, run_suite
from loopwright.messages import ModelResponse, Usage
from loopwright.testing import ScriptedModel

EVALS = Path(__file__).parents[2] / "evals"


def act(tool: str, **args: object) -> str:
    return json.dumps({"thought": f"use {tool}", "action": tool, "action_input": args})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def small_suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    shutil.copy(EVALS / "tools.py", folder / "tools.py")
    tasks = {
        "levels": {1: "one call", 4: "recovery", 5: "no tool", 6: "file"},
        "tasks": [
            {"id": "add", "level": 1, "request": "17+25", "tools": ["add"],
             "expect": {"answer_contains": ["42"], "calls": ["add"]}},
            {"id": "flaky", "level": 4, "request": "ACME?", "tools": ["stock_price"],
             "expect": {"answer_contains": ["123.45"], "calls": ["stock_price", "stock_price"]}},
            {"id": "none", "level": 5, "request": "capital of France", "tools": ["add"],
             "expect": {"answer_contains": ["Paris"], "no_calls": True}},
            {"id": "file", "level": 6, "request": "sum numbers.txt", "tools": ["read", "add"],
             "files": {"numbers.txt": "19\n23\n"},
             "expect": {"answer_contains": ["42"], "calls": ["read", "add"]}},
        ],
    }  # fmt: skip
    (folder / "tasks.yaml").write_text(json.dumps(tasks))  # JSON is valid YAML
    return folder


def scripts(tmp_path: Path) -> Path:
    folder = tmp_path / "scripts"
    folder.mkdir()
    replies = {
        "add": [act("add", a=17, b=25), final("17 + 25 = 42")],
        "flaky": [act("stock_price", symbol="ACME"), act("stock_price", symbol="ACME"), final("123.45")],
        "none": [act("add", a=1, b=1), final("Paris")],  # calls a tool it did not need: fails
        "file": [act("read", path="numbers.txt"), final("42")],  # skipped the add call: fails
    }  # fmt: skip
    for task_id, script in replies.items():
        (folder / f"{task_id}.json").write_text(json.dumps(script))
    return folder


def test_eval_command_scores_tasks_and_writes_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_path = tmp_path / "report.json"
    code = main(
        ["eval", str(small_suite(tmp_path)), "--model", f"scripted:{scripts(tmp_path)}",
         "--report", str(report_path)]
    )  # fmt: skip
    report = json.loads(report_path.read_text())
    assert code == 0
    printed = capsys.readouterr().out
    assert re.search(r"per task: [\d.]+s \([\d.]+s in the model\), [\d,]+ tokens", printed)
    assert "prompt evaluated/all" in printed
    outcomes = {t["id"]: t for t in report["tasks"]}
    assert outcomes["add"]["passed"] and outcomes["flaky"]["passed"]
    assert not outcomes["none"]["passed"]
    assert "expected no tool calls" in outcomes["none"]["problems"][0]
    assert not outcomes["file"]["passed"]
    assert "expected calls ['read', 'add'] in order" in outcomes["file"]["problems"][0]
    assert report["success_rate"] == 0.5
    assert report["by_level"]["4"] == {"passed": 1, "total": 1}
    assert outcomes["flaky"]["iterations"] == 3


async def test_report_has_seconds_tokens_and_prompt_cache_per_call(tmp_path: Path) -> None:
    suite = load_suite(small_suite(tmp_path))
    replies = [  # the second call found 520 of its 640 prompt tokens in the prompt cache
        ModelResponse(text=act("add", a=17, b=25), usage=Usage(500, 20)),
        ModelResponse(text=final("17 + 25 = 42"), usage=Usage(640, 10, 520)),
    ]
    report = await run_suite(suite, lambda task: ScriptedModel(replies), only={"add"})
    outcome = report.outcomes[0]
    assert outcome.passed
    assert outcome.prompt_tokens == [500, 640]
    assert outcome.prompt_tokens_evaluated == [500, 120]
    assert (outcome.input_tokens, outcome.output_tokens) == (1140, 30)
    assert 0 <= outcome.model_s <= outcome.wall_s
    per_task = report.to_dict()["per_task"]
    assert per_task["tokens"] == 1170
    assert (per_task["prompt_tokens"], per_task["prompt_tokens_evaluated"]) == (1140, 620)
    assert per_task["wall_s"] == outcome.wall_s
    saved = tmp_path / "report.json"
    report.write_json(saved)
    task = json.loads(saved.read_text())["tasks"][0]
    assert task["prompt_tokens_evaluated"] == [500, 120]


def test_file_checks_and_only(tmp_path: Path) -> None:
    suite = small_suite(tmp_path)
    code = main(
        ["eval", str(suite), "--model", f"scripted:{scripts(tmp_path)}", "--only", "add",
         "--report", str(tmp_path / "r.json")]
    )  # fmt: skip
    report = json.loads((tmp_path / "r.json").read_text())
    assert code == 0 and [t["id"] for t in report["tasks"]] == ["add"]


def test_an_eval_tools_file_that_fails_to_import_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text("from loopwright.tools import tool\nimport no_such_module\n")
    (tmp_path / "tasks.yaml").write_text("tasks: [{id: x, level: 1, request: r, tools: []}]")
    with pytest.raises(ConfigurationError) as caught:
        load_suite(tmp_path)
    tools = tmp_path / "tools.py"
    assert str(caught.value) == (
        f"eval tools '{tools}': importing {tools} failed at line 2: ModuleNotFoundError: "
        "No module named 'no_such_module'"
    )


def test_suite_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"no tasks\.yaml"):
        load_suite(tmp_path)
    (tmp_path / "tasks.yaml").write_text("tasks: [{id: x, level: 1, request: r, tools: [nope]}]")
    with pytest.raises(ConfigurationError, match=r"task 'x' uses unknown tools \['nope'\]"):
        load_suite(tmp_path)
    (tmp_path / "tasks.yaml").write_text("tasks: [{id: x, level: 1, tools: []}]")
    with pytest.raises(ConfigurationError, match="task 1 has no 'request'"):
        load_suite(tmp_path)
    (tmp_path / "tasks.yaml").write_text(
        "tasks: [{id: x, level: 1, request: r, tools: [], expect: {answer_contain: [a]}}]"
    )
    with pytest.raises(
        ConfigurationError, match=r"task 'x': unknown expect keys \['answer_contain'\]"
    ):
        load_suite(tmp_path)


async def test_an_answer_with_an_excluded_phrase_fails_though_it_names_the_right_city() -> None:
    suite = load_suite(EVALS)

    async def outcome_of(answer: str) -> tuple[bool, list[str]]:
        replies = [act("get_weather", city="Tokyo"), act("get_weather", city="Oslo"), final(answer)]
        report = await run_suite(
            suite, lambda task: ScriptedModel(replies), only={"two-cities-weather"}
        )
        return report.outcomes[0].passed, list(report.outcomes[0].problems)

    assert await outcome_of("Oslo is warmer than Tokyo right now.") == (
        False,
        ["answer has 'Oslo is warmer'"],
    )
    assert await outcome_of("Tokyo is warmer than Oslo.") == (True, [])


def test_the_shipped_suite_has_40_tasks_over_7_levels() -> None:
    suite = load_suite(EVALS)
    assert len(suite.tasks) >= 40
    assert sorted({t.level for t in suite.tasks}) == [1, 2, 3, 4, 5, 6, 7]
    choosing = [t for t in suite.tasks if t.level == 3]
    assert all(len(t.tools) == 10 for t in choosing)


def test_only_with_an_unknown_task_is_an_error_not_an_empty_success(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = small_suite(tmp_path)
    report = tmp_path / "r.json"
    code = main(["eval", str(suite), "--model", f"scripted:{scripts(tmp_path)}", "--only",
                 "nope,ad", "--report", str(report)])  # fmt: skip
    assert code == 2 and not report.exists()
    err = capsys.readouterr().err
    assert f"--only ad: no task 'ad' in {suite} (did you mean 'add'? its 4 tasks:" in err
    assert f"--only nope: no task 'nope' in {suite}" in err and "success" not in err
