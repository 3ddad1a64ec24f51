"""The first-time llama.cpp build shows done/total, elapsed and an estimate."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli_env, cli_tty_command

pytestmark = pytest.mark.subprocess

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_wheel.py"
FAKE_BUILD = """\
import sys
print("Building wheel for llama-cpp-python")
for step in range(1, 5):
    print(f"  [{step}/4] Building C object vendor/llama.cpp/file{step}.c.o", flush=True)
"""


def test_the_build_reports_steps_on_a_pipe(tmp_path: Path) -> None:
    fake = tmp_path / "fake_build.py"
    fake.write_text(FAKE_BUILD)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--wheels", str(tmp_path / "wheels"), "--interval", "0",
         "--command", f"{sys.executable} {fake}"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("building llama-cpp-python 0.3.36 (once; cached in ")
    assert lines[0].endswith(": starting, elapsed 0:00")
    assert any("3/4 steps (75%), elapsed 0:0" in line and "left" in line for line in lines)
    assert "4/4 steps (100%)" in lines[-2]
    assert lines[-1].split(": ")[-1].startswith("done in 0:0")
    log = tmp_path / "wheels" / "build-llama-cpp-python-0.3.36.log"
    assert "[4/4] Building C object" in log.read_text()


def test_the_build_draws_a_bar_on_a_terminal_and_fails_loudly(tmp_path: Path) -> None:
    fake = tmp_path / "fake_build.py"
    fake.write_text(FAKE_BUILD + "sys.exit(3)\n")
    result = cli_tty_command(
        [sys.executable, str(SCRIPT), "--wheels", str(tmp_path / "w"),
         "--command", f"{sys.executable} {fake}"],
        env=cli_env(tmp_path),
    )  # fmt: skip
    assert result.code == 3
    assert "[##############################] building llama-cpp-python" in result.out
    assert "FAILED in 0:0" in result.out and "the build failed (exit 3)" in result.out


def test_the_wheel_is_built_text_only_without_llama_cpps_common(tmp_path: Path) -> None:
    """The build gets no multimodal library and no `common`: the CMake flags it is given
    turn LLAVA_BUILD off and name a file, read after llama.cpp's project(), that turns
    llama-cpp-python's forced LLAMA_BUILD_COMMON off again."""
    fake = tmp_path / "show_cmake_args.py"
    fake.write_text("import os\nprint(os.environ['CMAKE_ARGS'])\n")
    env = {k: v for k, v in cli_env(tmp_path).items() if k != "CMAKE_ARGS"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--wheels", str(tmp_path / "wheels"), "--interval", "0",
         "--command", f"{sys.executable} {fake}"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "wheels" / "build-llama-cpp-python-0.3.36.log").read_text()
    flags = dict(arg.split("=", 1) for arg in shlex.split(log))
    assert flags["-DLLAVA_BUILD"] == "OFF" and flags["-DGGML_NATIVE"] == "OFF"
    hook = Path(flags["-DCMAKE_PROJECT_llama.cpp_INCLUDE"]).read_text()
    assert 'set(LLAMA_BUILD_COMMON OFF CACHE BOOL "Build llama.cpp common library" FORCE)' in hook
