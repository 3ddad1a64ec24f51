"""`--agent module:attribute` (or file.py:attribute): an agent built in Python on `run`,
`chat` and `runs resume`, through the real CLI as a program. A bad reference is one line
(exit 2, no traceback); a project's loopwright.toml names an agent only once trusted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import cli_env, cli_process

from loopwright.store import SqliteRunStore

pytestmark = pytest.mark.subprocess

AGENTS = Path(__file__).with_name("cli_agents.py")


def _runs(home: Path) -> list[str]:
    store = SqliteRunStore(home / "runs.db")
    try:
        return [f"{r.status}:{r.answer}" for r in store.list_runs()]
    finally:
        store.close()


def test_an_agent_object_from_a_module_runs(tmp_path: Path) -> None:
    shutil.copy(AGENTS, tmp_path / "my_agents.py")  # a module of the current folder
    done = cli_process("run", "shout once", "--agent", "my_agents:agent", home=tmp_path)
    assert done.code == 0, done.err
    assert "I shouted once" in done.out
    assert _runs(tmp_path) == ["completed:I shouted once"]


def test_a_factory_from_a_file_runs(tmp_path: Path) -> None:
    done = cli_process("run", "shout hi", "--agent", f"{AGENTS}:shouter", home=tmp_path)
    assert done.code == 0, done.err
    assert _runs(tmp_path) == ["completed:I shouted hi"]


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no_such_module_here:agent", "cannot import module 'no_such_module_here'"),
        ("{agents}:nobody", "has no attribute 'nobody'"),
        ("{agents}:not_an_agent", "not_an_agent is a int, not an AgentExecutor"),
        ("{agents}:broken", "calling broken() failed: RuntimeError: no key configured"),
        ("missing.py:agent", "file not found: missing.py"),
        ("just_a_name", "expected module:attribute or path/to/file.py:attribute"),
    ],
)
def test_a_bad_reference_is_one_line(tmp_path: Path, ref: str, message: str) -> None:
    ref = ref.format(agents=AGENTS)
    done = cli_process("run", "hi", "--agent", ref, home=tmp_path)
    assert done.code == 2
    assert done.err.startswith(f"loopwright: error: --agent {ref!r}: "), done.err
    assert message in done.err
    assert len(done.err.strip().splitlines()) == 1 and "Traceback" not in done.err
    assert _runs(tmp_path) == []  # nothing started


def test_on_temporal_a_reference_is_checked_not_imported(tmp_path: Path) -> None:
    """The workers load the agent (worker --agent): the client only checks the shape."""
    done = cli_process("run", "hi", "--agent", "just_a_name", "--engine", "temporal",
                       "--temporal", "localhost:1", home=tmp_path)  # fmt: skip
    assert done.code == 2
    assert "--agent 'just_a_name': expected module:attribute" in done.err
    assert len(done.err.strip().splitlines()) == 1


def test_a_project_file_names_an_agent_only_once_trusted(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(AGENTS, project / "agents.py")
    (project / "loopwright.toml").write_text('[run]\nagent = "agents.py:agent"\n')
    script = tmp_path / "script.json"
    script.write_text('["{\\"final_answer\\": \\"from the flags\\"}"]')
    untrusted = cli_process("run", "hi", "--model", f"scripted:{script}", home=tmp_path,
                            cwd=project)  # fmt: skip
    assert untrusted.code == 0, untrusted.err
    assert "ignoring run.agent (it imports agent code)" in untrusted.err
    assert _runs(tmp_path) == ["completed:from the flags"]

    trust = cli_process("config", "trust", str(project / "loopwright.toml"), home=tmp_path,
                        cwd=project)  # fmt: skip
    assert trust.code == 0, trust.err
    trusted = cli_process("run", "shout once", home=tmp_path, cwd=project)
    assert trusted.code == 0, trusted.err
    assert "completed:I shouted once" in _runs(tmp_path)


def test_a_chat_with_an_agent_built_in_python(tmp_path: Path) -> None:
    done = cli_process("chat", "--agent", f"{AGENTS}:shouter", home=tmp_path,
                       stdin="shout hi\nnow shout bye\n")  # fmt: skip
    assert done.code == 0, done.err
    store = SqliteRunStore(tmp_path / "runs.db")
    try:
        first, second = sorted(store.list_runs(), key=lambda r: r.created_at)
    finally:
        store.close()
    assert (first.answer, second.answer) == ("I shouted hi", "I shouted bye")
    assert second.after_run_id == first.run_id


def test_a_waiting_run_is_approved_and_resumed_from_the_command_line(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "old.txt").write_text("old")
    env = cli_env(tmp_path, CLI_AGENT_FOLDER=str(folder))
    ref = f"{AGENTS}:cleaner"
    waiting = cli_process("run", "clean up", "--agent", ref, home=tmp_path, env=env)
    assert waiting.code == 1, waiting.err
    listed = cli_process("runs", "list", "--status", "waiting", "--json", home=tmp_path, env=env)
    [run] = json.loads(listed.out)
    run_id = run["run_id"]
    assert f"`loopwright runs resume {run_id} --agent {ref} --store" in waiting.err
    assert (folder / "old.txt").exists()

    approved = cli_process("runs", "approve", run_id, home=tmp_path, env=env)
    assert approved.code == 0, approved.err
    resumed = cli_process("runs", "resume", run_id, "--agent", ref, home=tmp_path, env=env)
    assert resumed.code == 0, resumed.err
    assert "Cleaned up." in resumed.out
    assert not (folder / "old.txt").exists()
    assert _runs(tmp_path) == ["completed:Cleaned up."]


def test_runs_cancel_ends_a_waiting_run(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "old.txt").write_text("old")
    env = cli_env(tmp_path, CLI_AGENT_FOLDER=str(folder))
    ref = f"{AGENTS}:cleaner"
    waiting = cli_process("run", "clean up", "--agent", ref, home=tmp_path, env=env)
    assert waiting.code == 1, waiting.err
    [run_id] = [line.split()[-1] for line in waiting.out.splitlines() if " · run " in line]
    cancelled = cli_process("runs", "cancel", run_id, home=tmp_path, env=env)
    assert cancelled.out.strip() == f"cancelled run {run_id} (it was waiting)", cancelled.err
    refused = cli_process("runs", "resume", run_id, "--agent", ref, home=tmp_path, env=env)
    assert refused.code == 2
    assert "already ended (cancelled)" in refused.err
    assert _runs(tmp_path) == ["cancelled:None"]
    assert (folder / "old.txt").exists()
