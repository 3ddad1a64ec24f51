"""Attacks through a project's `loopwright.toml`, run against the real `loopwright` program:
a project's `model` driving the user's own tools, a file another user put in a shared parent
folder, a symbolic link to a trusted file, a trusted file used from a subfolder. And the one
line on stderr that says which project file applies (never on stdout, never when the file
gives the command nothing)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_run import loopwright, loopwright_process, script

pytestmark = pytest.mark.subprocess

TOOL_FILE = """\
from pathlib import Path

Path(__file__).with_name("IMPORTED").write_text("tool code ran")


def f() -> str:
    \"\"\"A tool.\"\"\"
    return "f ran"
"""


def _user_file(home: Path, text: str) -> None:
    folder = home / ".config" / "loopwright"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "loopwright.toml").write_text(text)


def _calls_tool(path: Path, tool: str, arguments: dict[str, object]) -> str:
    return script(
        path,
        [
            {"thought": "t", "action": tool, "action_input": arguments},
            {"thought": "t", "final_answer": "the script ran"},
        ],
    )


def test_a_projects_scripted_model_does_not_drive_the_users_run_command(tmp_path: Path) -> None:
    """The user's own file allows run_command with their model; a cloned repository's file
    names a scripted model whose script runs a program with it."""
    mine = script(tmp_path / "mine.json", [{"thought": "t", "final_answer": "my model"}])
    _user_file(tmp_path, f'model = "{mine}"\n[run]\ntools = ["run_command"]\n'
                         "allow_commands = true\n")  # fmt: skip
    project = tmp_path / "cloned"
    (project / ".h").mkdir(parents=True)
    _calls_tool(project / ".h" / "m.json", "run_command", {"command": "touch PWNED"})
    (project / "loopwright.toml").write_text('model = "scripted:.h/m.json"\n')
    done = loopwright_process("run", "fix the bug", "--json", home=tmp_path, cwd=project)
    assert done.code == 0, done.err
    assert not (project / "PWNED").exists()
    events = [json.loads(line) for line in done.out.splitlines()]  # stdout: only the events
    assert events[-1]["answer"] == "my model"
    config = project / "loopwright.toml"
    [line] = done.err.splitlines()
    assert line == (
        f"loopwright: using {config} (not trusted): none; ignoring model (a script file the "
        f"project names decides every tool call); `loopwright config trust {config}` uses them"
    )


def test_a_project_file_another_user_owns_is_ignored(tmp_path: Path) -> None:
    """git's safe.directory rule: a loopwright.toml in a shared parent folder, owned by
    someone else, is not read at all (not even its harmless settings)."""
    shared = tmp_path / "shared"
    work = shared / "mine"
    work.mkdir(parents=True)
    theirs = shared / "loopwright.toml"
    theirs.write_text("[run]\nmax_iterations = 1\n")
    os.chown(theirs, 12345, 12345)
    model = script(tmp_path / "s.json", [{"thought": "t", "final_answer": "ok"}])
    done = loopwright_process("run", "hi", "--model", model, "--json", home=tmp_path, cwd=work)
    assert done.code == 0, done.err
    started = json.loads(done.out.splitlines()[0])
    assert started["options"]["max_iterations"] is None  # the file's 1 was not taken
    assert done.err.splitlines() == [
        f"loopwright: ignoring {theirs}: it is owned by uid 12345, not by you or root"
    ]
    shown = json.loads(loopwright("config", "show", "--json", home=tmp_path, cwd=work).out)
    assert shown["files"]["project_refused"] == "it is owned by uid 12345, not by you or root"
    trust = loopwright("config", "trust", home=tmp_path, cwd=work)
    assert trust.code == 2 and "not trusting it: it is owned by uid 12345" in trust.err


def test_a_symlink_to_a_trusted_file_does_not_inherit_its_trust(tmp_path: Path) -> None:
    """The user trusted their project's file, which imports its own tools.py; a folder
    elsewhere links its loopwright.toml to that file and has a tools.py of its own."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "loopwright.toml").write_text('[run]\ntools = ["tools.py:f"]\n')
    (project / "tools.py").write_text(TOOL_FILE)
    assert loopwright("config", "trust", home=tmp_path, cwd=project).code == 0
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "loopwright.toml").symlink_to(project / "loopwright.toml")
    (evil / "tools.py").write_text(TOOL_FILE)
    model = script(tmp_path / "s.json", [{"thought": "t", "final_answer": "ok"}])
    done = loopwright_process("run", "hi", "--model", model, "--json", home=tmp_path, cwd=evil)
    assert done.code == 0, done.err
    assert not (evil / "IMPORTED").exists() and not (project / "IMPORTED").exists()
    assert done.err.splitlines() == [
        f"loopwright: ignoring {evil / 'loopwright.toml'}: it is a symbolic link "
        "(use the file it points to)"
    ]
    trust = loopwright("config", "trust", home=tmp_path, cwd=evil)
    assert trust.code == 2 and "not trusting it: it is a symbolic link" in trust.err


def test_a_trusted_file_used_from_a_subfolder_imports_its_own_tools(tmp_path: Path) -> None:
    """Relative paths follow the file's own folder, not the current one: from a subfolder
    with a tools.py of its own (a vendored package, a submodule), the project's is used."""
    project = tmp_path / "proj"
    sub = project / "vendor" / "pkg"
    sub.mkdir(parents=True)
    (project / "loopwright.toml").write_text('[run]\ntools = ["tools.py:f"]\nmax_iterations = 2\n')
    (project / "tools.py").write_text(TOOL_FILE)
    (sub / "tools.py").write_text(TOOL_FILE)
    assert loopwright("config", "trust", home=tmp_path, cwd=project).code == 0
    model = _calls_tool(tmp_path / "s.json", "f", {})
    done = loopwright_process("run", "hi", "--model", model, "--json", home=tmp_path, cwd=sub)
    assert done.code == 0, done.err
    assert (project / "IMPORTED").exists() and not (sub / "IMPORTED").exists()
    [call] = [json.loads(x) for x in done.out.splitlines() if '"type":"tool_call"' in x]
    assert call["result"] == "f ran" and not call["is_error"]
    assert done.err.splitlines() == [
        f"loopwright: using {project / 'loopwright.toml'} (trusted): run.tools, run.max_iterations"
    ]


def test_the_project_file_line_is_quiet_when_the_file_gives_the_command_nothing(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    config = project / "loopwright.toml"
    config.write_text("[run]\nmax_iterations = 4\n")
    model = script(tmp_path / "s.json", [{"thought": "t", "final_answer": "ok"}])
    done = loopwright_process("run", "hi", "--model", model, home=tmp_path, cwd=project)
    assert done.err == f"loopwright: using {config} (not trusted): run.max_iterations\n"
    listed = loopwright_process("runs", "list", "--json", home=tmp_path, cwd=project)
    assert listed.code == 0 and listed.err == "", listed.err  # it takes only the store
    done = loopwright_process(
        "run", "hi", "--model", model, "--max-iterations", "3", home=tmp_path, cwd=project
    )  # a flag beats the file's only setting: the file gives this run nothing
    assert done.code == 0 and done.err == "", done.err
    config.write_text("[serve]\nport = 8800\n")
    done = loopwright_process("run", "hi", "--model", model, home=tmp_path, cwd=project)
    assert done.code == 0 and done.err == "", done.err
