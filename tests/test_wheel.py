"""The artefact that ships is the one that is tested: `python -m build` makes an sdist and a
wheel (the wheel built from the sdist), the wheel goes into a fresh virtual environment with
the base dependencies only (no source tree on the path), and there the README's Python quick
start and `loopwright run --model scripted:...` work, and a command that needs an extra says
which one to install.

Needs the package index (or pip's cache) for setuptools and the base dependencies."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel
ROOT = Path(__file__).resolve().parents[1]
INSTALL_LIMIT_S = 600
RUN_LIMIT_S = 120
BUILD_LEFTOVERS = shutil.ignore_patterns("__pycache__", "*.egg-info")
# uv, as `make setup` installs it: `python -m build --installer uv` makes the build's
# isolated environments with it, and it installs the wheel: this file took 30 s of CPU with
# pip, 14 s with uv (34-38 s against 19-24 s, alternated on a loaded machine)
UV = str(Path(sys.executable).parent / "uv")


@dataclass(frozen=True)
class Installed:
    wheel: Path
    sdist: Path
    venv: Path
    folder: Path  # an empty working folder, away from the source tree

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)


def clean_env() -> dict[str, str]:
    """This environment without what would put the source tree or our venv on the path."""
    dropped = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    return {k: v for k, v in os.environ.items() if k not in dropped}


def run(
    command: list[str], cwd: Path, limit: float = RUN_LIMIT_S
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=limit
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("wheel")
    project = base / "project"  # a copy: building writes its metadata beside the sources
    shutil.copytree(ROOT / "src", project / "src", ignore=BUILD_LEFTOVERS)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    dist = base / "dist"
    build = [sys.executable, "-m", "build", "--installer", "uv", "--outdir", str(dist)]
    built = run([*build, str(project)], base, INSTALL_LIMIT_S)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("loopwright-*.whl")
    (sdist,) = dist.glob("loopwright-*.tar.gz")
    venv = base / "venv"  # without pip: uv installs into it (--python), and no
    # ensurepip run (about 7 s) before every wheel test
    made = run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base)
    assert made.returncode == 0, made.stderr
    install = [UV, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python")]
    done = run([*install, "-c", str(ROOT / "constraints.txt"), str(wheel)], base, INSTALL_LIMIT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = base / "work"
    folder.mkdir()
    yield Installed(wheel, sdist, venv, folder)


def test_the_wheel_holds_the_package_and_no_compiled_code(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert "loopwright/__init__.py" in names and "loopwright/py.typed" in names
    assert any(n.startswith("loopwright/server/static/") for n in names)
    assert not [n for n in names if n.endswith((".so", ".pyd", ".c")) or "_compiled" in n]
    assert not [n for n in names if n.startswith(("tests/", "bench/"))]


def test_the_sdist_holds_the_sources_and_the_project_file(installed: Installed) -> None:
    with tarfile.open(installed.sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "src/loopwright/__init__.py"} <= names


def test_the_base_install_has_no_extra(installed: Installed) -> None:
    """What `pip install loopwright` brings: the core, not the server's or the extras'."""
    code = (
        "import importlib.util, json, loopwright; print(json.dumps([loopwright.__file__, "
        "[m for m in ('starlette', 'uvicorn', 'websockets', 'mcp', 'psycopg', 'temporalio', "
        "'opentelemetry', 'llama_cpp') if importlib.util.find_spec(m)]]))"
    )
    done = run([installed.bin("python"), "-c", code], installed.folder)
    assert done.returncode == 0, done.stderr
    where, extras = json.loads(done.stdout)
    assert Path(where).is_relative_to(installed.venv), where
    assert extras == []


def readme_quick_start() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, "the README's quick start has no Python block"
    return found.group(1)


def test_the_readme_quick_start_runs_from_the_wheel(installed: Installed) -> None:
    script = installed.folder / "quick_start.py"
    script.write_text(readme_quick_start(), encoding="utf-8")
    done = run(
        [installed.bin("python"), "-W", "error::DeprecationWarning", str(script)], installed.folder
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["completed", "42"]


def test_loopwright_run_with_a_scripted_model_from_the_wheel(installed: Installed) -> None:
    command = [
        installed.bin("loopwright"), "run", "Say hello through the echo tool",
        "--model", f"scripted:{ROOT / 'examples' / 'echo.json'}", "--tools", "echo",
        "--json", "--store", str(installed.folder / "runs.db"),
    ]  # fmt: skip
    done = run(command, installed.folder)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["tool_name"] for e in events if e["type"] == "tool_call"] == ["echo"]
    assert events[-1]["type"] == "run_finished"
    assert events[-1]["answer"] == "The echo tool said: hello"


def test_a_command_that_needs_an_extra_names_it_in_one_line(installed: Installed) -> None:
    done = run([installed.bin("loopwright"), "serve", "--port", "0"], installed.folder)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "pip install 'loopwright[server]'" in done.stderr
