"""A misspelt tool, tool function or task input is an error that says what there is and
what was probably meant; nothing is silently ignored."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loopwright.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"
TOOL_FILE = '''
from os.path import join
from pathlib import Path
from loopwright import tool

@tool
def hello(name: str) -> str:
    """Say hello.

    Args:
        name: who
    """
    return "hi " + name

def helper(text: str) -> str:
    return text
'''


def test_an_unknown_tool_lists_the_built_ins_and_a_near_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = tmp_path / "mine.py"
    tools.write_text(TOOL_FILE)
    specs = f"reed,teleport,{tools}:hallo"
    assert main(["run", "hi", "--tools", specs, "--model", "scripted:none.json"]) == 2
    err = capsys.readouterr().err
    assert "unknown tool 'reed' (did you mean 'read'? built-in tools: echo, edit_file, glob" in err
    assert "unknown tool 'teleport' (built-in tools: echo," in err
    assert f"{tools} has no function 'hallo' (did you mean 'hello'? it has: hello, helper)" in err
    assert "join" not in err and "Path" not in err  # what the file imports is not its own


def _task(tmp_path: Path, *, tool: str = "list_keys", env: str = "inputs.env") -> Path:
    folder = tmp_path / "task"
    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns("workspace"))
    text = (folder / "rotate-keys.yaml").read_text()
    text = text.replace("tool: list_keys", f"tool: {tool}").replace(
        "      env: inputs.env\n      as_of: inputs.as_of\n      max_age_days", f"      env: {env}\n"
        "      as_of: inputs.as_of\n      max_age_days", 1
    )  # fmt: skip
    (folder / "rotate-keys.yaml").write_text(text)
    return folder / "rotate-keys.yaml"


def test_task_validate_names_an_undeclared_input_and_a_near_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = _task(tmp_path, env="inputs.environment")
    assert main(["task", "validate", str(task)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{task}:19: step 'list_keys': args_from 'env' reads input 'environment', which the "
        "task does not declare (inputs: as_of, env, max_age_days)"
    ) in err
    task = _task(tmp_path / "2", tool="list_key")
    assert main(["task", "validate", str(task)]) == 2
    assert "unknown tool 'list_key' (did you mean 'list_keys'? known:" in capsys.readouterr().err


def test_task_run_refuses_an_input_the_task_does_not_have(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["task", "run", str(_task(tmp_path)), "--input", "as_of=2025-06-01", "--input",
            "max_age=30", "--yes"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (
        "--input max_age: task 'rotate-keys' has no input 'max_age' (did you mean "
        "'max_age_days'? its inputs: as_of, env, max_age_days)"
    ) in err
