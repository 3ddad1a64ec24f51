"""`loopwright serve` and task folders: listing the tasks (`/api/info`, which the dashboard
asks first) imports none of their tool files, and a project file's `[serve] tasks` needs
trust. Real `loopwright serve` processes on loopback."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from cli_run import env_for

pytestmark = pytest.mark.subprocess

TASK = """\
name: {name}
description: says hello
tools: [{tools}]
steps:
  - name: greet
    type: tool
    tool: {function}
"""
TOOL_FILE = """\
from pathlib import Path

from loopwright import tool

Path(__file__).with_name("IMPORTED-" + Path(__file__).stem).write_text("tool code ran")


@tool
def {function}() -> str:
    \"\"\"A tool.\"\"\"
    return "ran"
"""


def _task_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, tools, function in (("hello", "tools.py", "f"), ("other", "other.py", "g")):
        (folder / f"{name}.yaml").write_text(TASK.format(name=name, tools=tools, function=function))
        (folder / tools).write_text(TOOL_FILE.format(function=function))
    return folder


@contextmanager
def _serve(home: Path, cwd: Path, *args: str) -> Iterator[tuple[str, list[str]]]:
    """`loopwright serve --port 0 --store :memory: ARGS` in `cwd`: its URL and the stderr
    lines before the one that says where it listens."""
    process = subprocess.Popen(
        [sys.executable, "-m", "loopwright", "serve", "--port", "0", "--store", ":memory:", *args],
        cwd=cwd, env=env_for(home), stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert process.stderr is not None
    try:
        before: list[str] = []
        for line in process.stderr:
            if "serving the dashboard and the API on " in line:
                yield line.split(" on ")[1].split()[0], before
                break
            before.append(line.rstrip("\n"))
        else:
            raise AssertionError(f"serve ended: {before}")
    finally:
        process.terminate()
        process.wait(timeout=20)
        process.stderr.close()


def test_listing_tasks_imports_no_tool_file(tmp_path: Path) -> None:
    tasks = _task_folder(tmp_path / "tasks")
    with _serve(tmp_path, tmp_path, "--tasks", str(tasks)) as (url, _):
        info = httpx.get(f"{url}/api/info", timeout=30).json()
        assert [task["name"] for task in info["tasks"]] == ["hello", "other"]
        assert not list(tasks.glob("IMPORTED-*"))  # listed, not imported
        started = httpx.post(f"{url}/api/runs", json={"task": "other"}, timeout=30)
        assert started.status_code == 201, started.text
        assert started.json()["tools"] == ["g"]  # loaded, its tool file imported, to start
    assert (tasks / "IMPORTED-other").exists()
    assert not (tasks / "IMPORTED-tools").exists()  # only the started task's tool file


def test_a_projects_task_folder_needs_trust(tmp_path: Path) -> None:
    project = tmp_path / "cloned"
    tasks = _task_folder(project / "tasks")
    (project / "loopwright.toml").write_text('[serve]\ntasks = "tasks"\n')
    with _serve(tmp_path, project) as (url, before):
        info = httpx.get(f"{url}/api/info", timeout=30).json()
        assert info["tasks"] == []
    assert not list(tasks.glob("IMPORTED-*"))
    config = project / "loopwright.toml"
    assert before == [
        f"loopwright: using {config} (not trusted): none; ignoring serve.tasks (it picks the "
        f"task files (and their tool code) served); `loopwright config trust {config}` uses them"
    ]
