"""Hostile task files: bounded YAML, bounded expressions, no code run by `task validate`,
hooks confined to the task's folder. Each gives a clear `file:line: problem`, never a
traceback, and fast."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from inprocess_cli import invoke
from loopwright.errors import TaskParseError
from loopwright.tasks import check_task, load_task

SRC = Path(__file__).resolve().parents[2] / "src"
ALIAS_BOMB = """\
name: bomb
steps:
  - name: a
    type: gate
inputs:
  a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
  h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
  i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def loopwright(*args: str, cwd: Path) -> tuple[int, str, float]:
    """`loopwright ARGS` in this process: (exit code, its output, seconds)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOPWRIGHT_")}
    env.update(XDG_CONFIG_HOME=str(cwd / ".config"), LOOPWRIGHT_STORE=str(cwd / "runs.db"))
    started = time.monotonic()
    done = invoke(args, env=env, cwd=cwd)
    return done.code, done.both, time.monotonic() - started


def test_an_alias_bomb_is_refused_by_validate_and_run(tmp_path: Path) -> None:
    task = tmp_path / "bomb.yaml"
    task.write_text(ALIAS_BOMB)
    code, out, seconds = loopwright("task", "validate", str(task), cwd=tmp_path)
    assert code == 2 and "Traceback" not in out
    # the line where the expansion passes the limit (f: 9 copies of e's 66,430 values)
    assert f"{task}:11: holds more than 100,000 values once its aliases are expanded" in out
    assert seconds < 20
    code, out, seconds = loopwright("task", "run", str(task), "--yes", cwd=tmp_path)
    assert code == 2 and "aliases are expanded" in out and "Traceback" not in out
    assert seconds < 20
    assert not (tmp_path / "runs.db").exists() or (tmp_path / "runs.db").stat().st_size < 1 << 20


RECURSIVE = "name: loop\nsteps:\n  - name: a\n    type: gate\ninputs:\n  a: &s {b: *s}\n"


def test_a_recursive_alias_is_refused_at_once_by_every_loader(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    task = folder / "loop.yaml"
    task.write_text(RECURSIVE)
    (folder / "fine.yaml").write_text("name: fine\nsteps:\n  - name: a\n    type: gate\n")
    problem = f"{task}:6: the alias *s refers to a value that contains it"
    for args in (
        ("task", "validate", str(task)),
        ("task", "run", str(task), "--yes"),
        ("task", "run", str(folder), "--match", "loop", "--yes"),
    ):
        code, out, seconds = loopwright(*args, cwd=tmp_path)
        assert problem in out and "Traceback" not in out, args
        assert seconds < 20, args
    skill = tmp_path / "skills" / "loop"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: loop\ndescription: d\nmetadata: &m {m: *m}\n---\n")
    code, out, seconds = loopwright("skills", "list", str(tmp_path / "skills"), cwd=tmp_path)
    assert code == 1 and f"{skill / 'SKILL.md'}:4: the alias *m refers to a value" in out
    assert seconds < 20
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "tasks.yaml").write_text("tasks: &t [*t]\n")
    code, out, seconds = loopwright("eval", str(evals), "--model", "scripted:x", cwd=tmp_path)
    assert code == 2 and f"{evals / 'tasks.yaml'}:1: the alias *t refers" in out
    assert "Traceback" not in out and seconds < 20
    from loopwright.server import FolderTaskLauncher

    assert FolderTaskLauncher(folder).names() == ["fine"]  # what `serve --tasks` offers


def test_a_large_flat_file_is_refused_for_what_it_holds_without_reading_it_all(
    tmp_path: Path,
) -> None:
    """The loader stops at the value past the limit: the file's last line is not even valid
    YAML, and a loader that read the whole file first would report that instead."""
    task = tmp_path / "flat.yaml"
    values = ",".join(["0"] * 460_000)
    task.write_text("name: flat\ninputs:\n  l: [" + values + "]\nbroken: [\n")
    assert 0.9e6 < task.stat().st_size < 1 << 20  # under the 1 MiB docs/tasks.md allows
    small = tmp_path / "small.yaml"  # what the loader says on reaching that last line
    small.write_text("name: flat\ninputs:\n  l: [0]\nbroken: [\n")
    code, out, _ = loopwright("task", "validate", str(small), cwd=tmp_path)
    assert code == 2 and "not valid YAML" in out, out
    code, out, _ = loopwright("task", "validate", str(task), cwd=tmp_path)
    assert code == 2 and f"{task}:3: holds more than 100,000 values" in out
    assert "alias" not in out and "not valid YAML" not in out  # none; it stopped before the end


def test_a_character_yaml_does_not_allow_is_a_clear_error(tmp_path: Path) -> None:
    task = tmp_path / "ctl.yaml"
    task.write_text("name: ctl\nsteps:\n  - name: a\n    type: gate\ndescription: a\x01b\n")
    code, out, _ = loopwright("task", "validate", str(task), cwd=tmp_path)
    assert code == 2 and "Traceback" not in out
    assert f"{task}:5: not valid YAML: the character U+0001 is not allowed" in out


def test_yaml_nested_100000_deep_is_a_clear_error(tmp_path: Path) -> None:
    task = tmp_path / "deep.yaml"
    task.write_text("name: deep\ninputs:\n  x: " + "[" * 100_000 + "]" * 100_000 + "\n")
    code, out, seconds = loopwright("task", "validate", str(task), cwd=tmp_path)
    assert code == 2 and "Traceback" not in out
    assert f"{task}:3: nested more than 64 levels deep" in out
    assert seconds < 20


def test_a_document_over_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    task = tmp_path / "big.yaml"
    task.write_text("name: big\ndescription: " + "x" * (1 << 20) + "\n")
    with pytest.raises(TaskParseError, match="larger than 1,048,576 bytes"):
        load_task(task)


def test_a_condition_of_20000_nots_and_a_deeply_nested_one(tmp_path: Path) -> None:
    task = tmp_path / "nots.yaml"
    many = "not " * 20_000 + "inputs.go"
    deep = "not " * 40 + "inputs.go"
    task.write_text(
        "name: nots\ninputs: {go: yes}\nsteps:\n"
        f"  - name: a\n    type: gate\n    condition: {many}\n"
        f"  - name: b\n    type: gate\n    condition: {deep}\n"
        "  - name: c\n    type: gate\n    condition: not not inputs.go\n"
    )
    code, out, seconds = loopwright("task", "validate", str(task), cwd=tmp_path)
    assert code == 2 and "Traceback" not in out
    assert f"{task}:6: step 'a': condition is 80,009 characters long (at most 1,000)" in out
    assert f"{task}:9: step 'b': condition is nested too deeply (at most 32 levels)" in out
    assert "step 'c'" not in out
    assert seconds < 20


def test_validate_never_imports_the_tool_files_a_task_names(tmp_path: Path) -> None:
    marker = tmp_path / "RAN"
    (tmp_path / "evil.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n\ndef wipe() -> str:\n    return 'x'\n"
    )
    (tmp_path / "broken.py").write_text("def (:\n")
    task = tmp_path / "t.yaml"
    task.write_text(
        "name: t\ntools: [evil.py, evil.py:wipe, broken.py]\nsteps:\n"
        "  - name: a\n    type: tool\n    tool: wipe\n"
    )
    code, out, _ = loopwright("task", "validate", str(task), cwd=tmp_path)
    assert not marker.exists()
    assert code == 2
    assert f"{tmp_path / 'broken.py'}:1: not valid Python" in out
    check = check_task(task)
    assert [p.file_path for p in check.problems] == [str(tmp_path / "broken.py")]
    assert not marker.exists()


@pytest.mark.parametrize("target", ["../outside.md", "/etc/hostname", "link.md"])
def test_hook_paths_stay_inside_the_task_folder(tmp_path: Path, target: str) -> None:
    folder = tmp_path / "task"
    folder.mkdir()
    (tmp_path / "outside.md").write_text("---\n---\nDo something outside.\n")
    (folder / "link.md").symlink_to(tmp_path / "outside.md")
    task = folder / "t.yaml"
    task.write_text(f"name: t\nhooks:\n  pre-task: {target}\nsteps:\n  - name: a\n    type: gate\n")
    check = check_task(task)
    [problem] = check.problems
    assert problem.line == 3 and "is outside the task's folder" in problem.message
    with pytest.raises(TaskParseError, match="outside the task's folder"):
        load_task(task)


def test_a_default_hook_that_links_outside_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "task"
    (folder / "hooks").mkdir(parents=True)
    (tmp_path / "outside.md").write_text("---\n---\nDo something outside.\n")
    (folder / "hooks" / "pre-task.md").symlink_to(tmp_path / "outside.md")
    task = folder / "t.yaml"
    task.write_text("name: t\nsteps:\n  - name: a\n    type: gate\n")
    [problem] = check_task(task).problems
    assert "'pre-task': pre-task.md is outside the task's folder" in problem.message
