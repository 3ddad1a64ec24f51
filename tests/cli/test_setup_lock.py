"""A reproducible set-up: make installs from constraints.txt, which matches pyproject.toml."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "scripts" / "lock.py"


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(LOCK), "--check", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_committed_constraints_match_pyproject() -> None:
    result = check(ROOT)
    assert result.returncode == 0, result.stderr
    assert "constraints.txt matches pyproject.toml" in result.stdout


def test_a_changed_dependency_list_or_a_pin_out_of_range_fails_the_check(tmp_path: Path) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copy(ROOT / "constraints.txt", tmp_path)
    pyproject = tmp_path / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(text.replace('"rich>=13",', '"rich>=13",\n    "left-pad>=1",'))
    result = check(tmp_path)
    assert result.returncode == 1
    assert "the dependencies in pyproject.toml changed" in result.stderr
    assert "left-pad has no pin" in result.stderr and "make lock" in result.stderr

    pyproject.write_text(text)
    constraints = tmp_path / "constraints.txt"
    pinned = constraints.read_text()
    rich_pin = next(line for line in pinned.splitlines() if line.startswith("rich=="))
    constraints.write_text(pinned.replace(rich_pin, "rich==12.6.0"))
    result = check(tmp_path)
    assert result.returncode == 1 and "rich==12.6.0 is outside >=13" in result.stderr


def test_make_installs_with_the_constraints_and_checks_them_in_make_test() -> None:
    make = shutil.which("make")
    assert make is not None
    setup = subprocess.run(
        [make, "-n", "-B", "setup", "VENV=/nonexistent-venv"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "-c constraints.txt -e '.[all,dev]'" in setup.stdout
    test = subprocess.run(
        [make, "-n", "test"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert "scripts/lock.py --check" in test.stdout


def dry_run(*targets: str) -> str:
    """What make would run for `targets` on a fresh machine (nothing built yet)."""
    make = shutil.which("make")
    assert make is not None
    done = subprocess.run(
        [make, "-n", "-B", *targets, "VENV=/nonexistent-venv", "HOME=/nonexistent-home"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_demo_installs_only_what_the_demo_needs() -> None:
    """The venv, the llama.cpp wheel and the project with the embedded model: no browser,
    no PostgreSQL, no C compiler for our code, no developer tools."""
    demo = dry_run("demo")
    assert "scripts/build_wheel.py" in demo
    assert "-c constraints.txt -e '.[local]'" in demo
    for absent in ("chromium", "postgresql", "build_llama_server", "[all", "dev]", "gcc"):
        assert absent not in demo, absent


def test_make_test_never_builds_llama_server() -> None:
    test = dry_run("test")
    assert "build_llama_server" not in test and "cmake" not in test
    assert "chromium" in test and "postgresql" in test  # it sets up what the suite needs
    assert "build_llama_server" in dry_run("eval-compare")
