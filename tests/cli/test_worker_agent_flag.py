"""`loopwright worker --agent REF`: the worker loads its agent before it reaches Temporal,
so a bad reference (or an agent a worker cannot run) is one line and nothing starts; and
only the worker's own command line names it: a project's loopwright.toml cannot."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import cli_process

pytestmark = pytest.mark.subprocess

AGENTS = Path(__file__).with_name("cli_agents.py")
UNREACHED = ("--temporal", "localhost:1", "--store", "postgresql://nobody@127.0.0.1:1/none")
"""Nothing listens there: the worker fails before it would connect."""

NEEDS_DEPS = """
from dataclasses import dataclass

from loopwright import AgentExecutor
from loopwright.testing import ScriptedModel


@dataclass
class Shop:
    name: str


agent = AgentExecutor(ScriptedModel([]), deps_type=Shop)
"""


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no_such_module_here:agent", "cannot import module 'no_such_module_here'"),
        ("{agents}:not_an_agent", "not_an_agent is a int, not an AgentExecutor"),
        ("{folder}/deps.py:agent", "a worker gives its runs no deps"),
        ("just_a_name", "expected module:attribute or path/to/file.py:attribute"),
    ],
)
def test_a_worker_with_a_bad_agent_says_so_in_one_line(
    tmp_path: Path, ref: str, message: str
) -> None:
    (tmp_path / "deps.py").write_text(NEEDS_DEPS)
    ref = ref.format(agents=AGENTS, folder=tmp_path)
    done = cli_process("worker", *UNREACHED, "--agent", ref, home=tmp_path, timeout=60)
    assert done.code == 2, done.out + done.err
    assert done.err.startswith(f"loopwright: error: --agent {ref!r}: "), done.err
    assert message in done.err
    assert len(done.err.strip().splitlines()) == 1 and "Traceback" not in done.err
    assert "polling" not in done.out


def test_a_project_file_cannot_name_the_workers_agent(tmp_path: Path) -> None:
    (tmp_path / "loopwright.toml").write_text(f'[worker]\nagent = "{AGENTS}:agent"\n')
    done = cli_process("worker", *UNREACHED, home=tmp_path, timeout=60)
    assert done.code == 2, done.out + done.err
    assert "unknown key 'worker.agent'" in done.err
