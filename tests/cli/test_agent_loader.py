"""`--agent module:attribute` (cli/_agent_ref.py, serve's served_agent): an agent, or a
factory returning one, from a module or a file; anything else a one-line ConfigurationError."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from loopwright import AgentExecutor
from loopwright.cli._agent_ref import load_agent
from loopwright.cli._serve import served_agent
from loopwright.errors import ConfigurationError

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


def test_an_agent_or_a_factory_from_a_file(agents_file: Path) -> None:
    assert isinstance(load_agent(f"{agents_file}:agent"), AgentExecutor)
    made = load_agent(f"{agents_file}:make")
    assert isinstance(made, AgentExecutor)


def test_a_module_of_the_current_folder(agents_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(agents_file.parent)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "agents", raising=False)
    assert isinstance(load_agent("agents:make"), AgentExecutor)


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
def test_what_is_not_an_agent_is_refused(agents_file: Path, refusal: Refusal) -> None:
    with pytest.raises(ConfigurationError) as caught:
        load_agent(f"{agents_file}:{refusal.attribute}")
    assert refusal.says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_missing_file_or_module(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="file not found"):
        load_agent(f"{tmp_path}/none.py:agent")
    with pytest.raises(ConfigurationError, match="cannot import module 'no_such_mod_xyz'"):
        load_agent("no_such_mod_xyz:agent")


def test_serve_takes_no_agent_that_needs_deps(agents_file: Path) -> None:
    with pytest.raises(ConfigurationError, match="the server gives its runs no deps"):
        served_agent(f"{agents_file}:typed")
    assert isinstance(served_agent(f"{agents_file}:agent"), AgentExecutor)
