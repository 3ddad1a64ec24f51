"""`--tools` problems and `task run`'s check: every problem at once, before anything runs."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import cli


def test_every_bad_tool_spec_is_reported_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    (tmp_path / "broken.py").write_text("x = 1\ndef oops(:\n")
    marker = tmp_path / "RAN"
    (tmp_path / "side.py").write_text(f"open({str(marker)!r}, 'w')\ndef f() -> None: ...\n")
    tools = "good.py:add,good.py:sub,broken.py:oops,missing.py:f,teleport,side.py:g"
    result = cli("run", "add", "--tools", tools, "--model", "scripted:none.json", home=tmp_path)
    assert result.code == 2
    text = result.err
    assert "good.py has no function 'sub' (it has: add)" in text
    assert "\nbroken.py:2: not valid Python" in text
    assert "tool file not found: missing.py" in text
    assert "unknown tool 'teleport' (built-in tools: echo, edit_file, glob, grep" in text
    assert "side.py has no function 'g' (it has: f)" in text
    assert not marker.exists()
    assert "Traceback" not in text


def test_task_run_checks_every_problem_before_the_first_step(tmp_path: Path) -> None:
    task = tmp_path / "t.yaml"
    task.write_text(
        "name: t\nsteps:\n  - name: a\n    type: tool\n    tool: read\n    args: {path: x}\n"
        "  - name: b\n    type: gate\n    condition: results.zzz.ok\n"
        "  - name: c\n    type: agent\n"
    )
    result = cli("task", "run", str(task), "--yes", home=tmp_path)
    assert result.code == 2
    lines = [line.removeprefix("loopwright: error: ") for line in result.err.splitlines()]
    assert lines == [
        f"{task}:3: step 'a': unknown tool 'read' (known: none)",
        f"{task}:9: step 'b': condition refers to step 'zzz', which does not exist",
        f"{task}:10: step 'c': an agent step needs a 'description'",
    ]
    assert not (tmp_path / "runs.db").exists()
