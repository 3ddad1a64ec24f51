"""`--agent module:attribute`: an agent, or a factory returning one, from a module or a
file; anything else a one-line error naming the reference (exit 2), before anything runs.
Through the CLI (`loopwright.cli.main`, in this process)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from loopwright.cli import main

AGENTS = """
from dataclasses import dataclass
from loopwright import AgentExecutor
from loopwright.testing import ScriptedModel

agent = AgentExecutor(ScriptedModel(["{}"]), [])
calls = []

def make():
    calls.append(1)
    return AgentExecutor(ScriptedModel(["{}"]), [])

def broken():
    raise RuntimeError("no key")

def not_an_agent():
    return 42

@dataclass
class Deps:
    user: str

typed = AgentExecutor(ScriptedModel(["{}"]), [], deps_type=Deps)
"""


@pytest.fixture
def agents_file(tmp_path: Path) -> Path:
    path = tmp_path / "agents.py"
    path.write_text(AGENTS)
    return path


def run_with(agent: str, folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`loopwright run hi --agent AGENT`: its exit code and what it said on stderr."""
    code = main(["run", "hi", "--agent", agent, "--store", str(folder / "runs.db"), "--json"])
    return code, capsys.readouterr().err


def test_an_agent_or_a_factory_from_a_file(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_with(f"{agents_file}:agent", agents_file.parent, capsys) == (0, "")
    assert run_with(f"{agents_file}:make", agents_file.parent, capsys) == (0, "")


def test_a_module_of_the_current_folder(
    agents_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(agents_file.parent)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "agents", raising=False)
    assert run_with("agents:make", agents_file.parent, capsys) == (0, "")


@dataclass(frozen=True)
class Refusal:
    attribute: str
    says: str


@pytest.mark.parametrize(
    "refusal",
    [
        Refusal("missing", "has no attribute 'missing'"),
        Refusal("broken", "calling broken() failed: RuntimeError: no key"),
        Refusal("not_an_agent", "not_an_agent is a int, not an AgentExecutor"),
        Refusal("calls", "calls is a list, not an AgentExecutor"),
    ],
)
def test_what_is_not_an_agent_is_refused(
    agents_file: Path, refusal: Refusal, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = run_with(f"{agents_file}:{refusal.attribute}", agents_file.parent, capsys)
    assert code == 2 and refusal.says in said
    assert said.count("\n") == 1, said  # one line
    assert not (agents_file.parent / "runs.db").exists()  # refused before anything ran


def test_a_missing_file_or_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, said = run_with(f"{tmp_path}/none.py:agent", tmp_path, capsys)
    assert code == 2 and "file not found" in said
    code, said = run_with("no_such_mod_xyz:agent", tmp_path, capsys)
    assert code == 2 and "cannot import module 'no_such_mod_xyz'" in said


def test_serve_takes_no_agent_that_needs_deps(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["serve", "--agent", f"{agents_file}:typed", "--store", ":memory:", "--port", "0"])
    assert code == 2
    assert "the server gives its runs no deps" in capsys.readouterr().err
