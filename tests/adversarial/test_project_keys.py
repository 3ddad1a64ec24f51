"""Every key a project's `loopwright.toml` may hold has a trust rule: until the user trusts
the file, it may tighten what the user has (their own value, else the built-in one) but not
loosen a limit, drop a protection, or pick code or data (a model, a store, a tenant, files a
run reads). A project file's relative paths follow its own folder, from any subfolder."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_run import loopwright

from loopwright.config._schema import SECTIONS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"


def _show(home: Path, cwd: Path) -> dict[str, Any]:
    """`config show --json` with no LOOPWRIGHT_STORE: the files' stores show."""
    done = loopwright("config", "show", "--json", home=home, cwd=cwd, drop=("LOOPWRIGHT_STORE",))
    assert done.code == 0, done.err
    data: dict[str, Any] = json.loads(done.out)
    return data


def _user_file(home: Path, text: str) -> None:
    folder = home / ".config" / "loopwright"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "loopwright.toml").write_text(text)


def test_every_key_has_a_rule_and_a_row_in_the_security_page() -> None:
    from loopwright.config._trust_rules import RULES

    keys = {item.key for items in SECTIONS.values() for item in items}
    assert keys == set(RULES)
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Project files") :]
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE))
    assert rows == keys


def test_the_rules_agree_with_what_they_stand_for() -> None:
    from loopwright.agent import AgentExecutor
    from loopwright.agent._options import ITERATION_TIERS
    from loopwright.config import _trust_rules as rules
    from loopwright.models._local import PACKAGED_MODELS
    from loopwright.testing import ScriptedModel
    from loopwright.tools.builtin import BUILTIN_TOOLS

    changing = {name for name, tool in BUILTIN_TOOLS.items() if tool.effect != "read"}
    assert changing == set(rules.FILE_CHANGING_TOOLS)
    assert rules.ITERATIONS_BY_TIER == ITERATION_TIERS
    wall_clocks = [  # the built-in wall clocks: a run without tools, a run with them
        AgentExecutor(ScriptedModel([]), tools).options.timeout_s
        for tools in ([], [BUILTIN_TOOLS["echo"]])
    ]
    assert max(t for t in wall_clocks if t is not None) == rules.LONGEST_BUILT_IN_WALL_CLOCK
    assert set(PACKAGED_MODELS) <= set(rules.PACKAGED_LOCAL_MODELS)


LOOSE = """\
tenant = "other"
[run]
timeout = 0
max_iterations = 1000
tier = "complex"
no_progress_limit = 50
tools = ["read", "write_file"]
secrets_file = ["s.txt"]
store = "runs.db"
iteration_timeout = 30
max_cost = 0.5
repetition_threshold = 2
approve = ["write"]
[task]
state_dir = "state"
rollback_on_failure = false
gate_timeout = 30
[serve]
tasks = "tasks"
agent = "agent.py:agent"
[worker]
task_queue = "prod"
graceful_timeout = 600
sticky_timeout = 1
"""


def test_an_untrusted_file_may_tighten_but_not_loosen_or_pick(tmp_path: Path) -> None:
    project = tmp_path / "cloned"
    project.mkdir()
    (project / "loopwright.toml").write_text(LOOSE)
    (project / "s.txt").write_text("x" * 8)
    _user_file(tmp_path, "[task]\nrollback_on_failure = true\n")
    shown = _show(tmp_path, project)
    ignored = {item["key"]: item["reason"] for item in shown["ignored"]}
    assert ignored == {
        "tenant": "it files your runs under another tenant",
        "run.timeout": "it turns off a limit",
        "run.max_iterations": "it raises a limit (yours: 10)",
        "run.tier": "it raises the iteration limit (yours: standard)",
        "run.no_progress_limit": "it raises a limit (yours: 5)",
        "run.tools": "it lets the model change files",
        "run.secrets_file": "it picks files every run reads, in place of yours",
        "run.store": "it picks where your runs are kept and what resume re-runs",
        "task.state_dir": "it picks where task state and backups are read back",
        "task.rollback_on_failure": "it turns off your rollback on failure",
        "serve.tasks": "it picks the task files (and their tool code) served",
        "serve.agent": "it imports agent code",
        "worker.task_queue": "it picks which runs this worker takes",
        "worker.graceful_timeout": "it raises a limit (yours: 30)",
    }
    values = {f"{v['section']}.{v['key']}": v for v in shown["values"]}
    tightened = {"run.iteration_timeout": 30.0, "run.max_cost": 0.5, "task.gate_timeout": 30.0,
                 "run.repetition_threshold": 2, "run.approve": "write",
                 "worker.sticky_timeout": 1.0}  # fmt: skip
    for key, value in tightened.items():
        assert values[key]["value"] == value and values[key]["source"] == "project file", key
    assert values["task.rollback_on_failure"]["value"] is True  # the user's own


@pytest.mark.parametrize(
    ("user", "model", "reason"),
    [
        ("", "ollama:qwen3:8b", "it changes your model (local to ollama:qwen3:8b)"),
        ('model = "openai:gpt-4o"\n', "local", "it changes your model (openai:gpt-4o to local)"),
        ("", "local:weights/m.gguf", "it loads a model file the project names"),
        ("", "scripted:/abs/m.json", "a script file the project names decides every tool call"),
        ('model = "ollama:qwen3:8b"\n', "ollama:qwen3:8b", None),
        ("", "local", None),
        ("", "local:small", "it changes your model (local to local:small)"),
    ],
)
def test_a_projects_model_needs_trust_unless_it_is_yours(
    tmp_path: Path, user: str, model: str, reason: str | None
) -> None:
    project = tmp_path / "cloned"
    project.mkdir()
    (project / "loopwright.toml").write_text(f'[run]\nmodel = "{model}"\n')
    if user:
        _user_file(tmp_path, user)
    shown = _show(tmp_path, project)
    ignored = {item["key"]: item["reason"] for item in shown["ignored"]}
    assert ignored == ({"run.model": reason} if reason else {})


PATHS = """\
workspace = "."
store = "data/runs.db"
[run]
tools = ["read", "tools.py:f", "mypkg.tools:g"]
secrets_file = ["s.txt", "~/elsewhere.txt"]
model = "scripted:.h/m.json"
[serve]
tasks = "tasks"
token_file = "tokens.toml"
[task]
state_dir = "state"
model = "local:weights/m.gguf?threads=2"
"""


def test_relative_paths_follow_the_files_own_folder(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    sub = project / "deep" / "sub"
    sub.mkdir(parents=True)
    (project / "loopwright.toml").write_text(PATHS)
    assert loopwright("config", "trust", home=tmp_path, cwd=project).code == 0
    shown = _show(tmp_path, sub)
    assert shown["files"]["project_trust"] == "trusted" and shown["ignored"] == []
    values = {f"{v['section']}.{v['key']}": v["value"] for v in shown["values"]}
    real = project.resolve()
    assert values["run.workspace"] == str(real)
    assert values["run.store"] == str(real / "data" / "runs.db")
    assert values["run.tools"] == f"read,{real / 'tools.py'}:f,mypkg.tools:g"
    assert values["run.secrets_file"] == f"{real / 's.txt'},~/elsewhere.txt"
    assert values["run.model"] == f"scripted:{real / '.h' / 'm.json'}"
    assert values["serve.tasks"] == str(real / "tasks")
    assert values["serve.token_file"] == str(real / "tokens.toml")
    assert values["task.state_dir"] == str(real / "state")
    assert values["task.model"] == f"local:{real / 'weights' / 'm.gguf'}?threads=2"
