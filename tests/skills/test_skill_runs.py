"""A skill folder with supporting files, run end to end under the ScriptedModel."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from loopwright.cli import main
from loopwright.events import RunFinishedEvent, RunStartedEvent, ToolCallEvent
from loopwright.skills import AutonomousConfig, AutonomousSkillExecutor, load_skill
from loopwright.testing import ScriptedModel
from loopwright.tools import BUILTIN_TOOLS, ToolRegistry

EXAMPLES = Path(__file__).parents[2] / "examples" / "skills"


def step(thought: str, tool: str, **args: object) -> str:
    return json.dumps({"thought": thought, "action": tool, "action_input": args})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def workspace(tmp_path: Path) -> Path:
    shutil.copy(EXAMPLES / "code-review-sample" / "app.py", tmp_path / "app.py")
    return tmp_path


async def test_skill_reads_workspace_file_and_its_own_supporting_file(tmp_path: Path) -> None:
    skill = load_skill(EXAMPLES / "code-review")
    model = ScriptedModel(
        [
            step("read the code", "read", path="app.py"),
            step("check the team rules", "read", path="checklist.md"),
            final("line 1: mutable default; line 3: eval; line 4: bare except"),
        ]
    )
    registry = ToolRegistry(BUILTIN_TOOLS.values())
    executor = AutonomousSkillExecutor(skill, registry, model=model, workspace=workspace(tmp_path))
    events = [e async for e in executor.execute("app.py", task_id="t-1", session_id="s-1")]

    assert isinstance(events[0], RunStartedEvent)
    assert events[0].tools == ["read", "list_files", "grep"]  # the skill's allowed-tools
    observations = [e.result for e in events if isinstance(e, ToolCallEvent)]
    assert "def load(items=[]):" in observations[0]
    assert "Mutable default arguments" in observations[1]
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "completed"
    system = model.requests[0].messages[0].content
    assert "You review the code the user names: app.py" in system
    assert "- echo:" not in system


async def test_execute_sync_returns_execution_result(tmp_path: Path) -> None:
    skill = load_skill(EXAMPLES / "code-review")
    model = ScriptedModel([final("looks fine")])
    executor = AutonomousSkillExecutor(
        skill,
        ToolRegistry(BUILTIN_TOOLS.values()),
        config=AutonomousConfig(max_iterations=3),
        model=model,
        workspace=tmp_path,
    )
    result = await executor.execute_sync("app.py")
    assert result.success and result.answer == "looks fine"
    assert "[Iteration 1 of at most 3]" in model.requests[0].messages[-1].content


async def test_skill_run_stops_at_its_iteration_limit(tmp_path: Path) -> None:
    skill = load_skill(EXAMPLES / "code-review")
    replies = [step("again", "list_files", path=".") for _ in range(2)]
    executor = AutonomousSkillExecutor(
        skill,
        ToolRegistry(BUILTIN_TOOLS.values()),
        config=AutonomousConfig(max_iterations=2),
        model=ScriptedModel(replies),
        workspace=tmp_path,
    )
    result = await executor.execute_sync("app.py")
    assert result.status == "stopped" and result.reason == "max_iterations"


def test_cli_run_with_skill(tmp_path: Path, capsys: object) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([step("read", "read", path="app.py"), final("3 findings")]))
    code = main(
        [
            "run", "app.py", "--skill", str(EXAMPLES / "code-review"),
            "--model", f"scripted:{script}", "--tools", "read,list_files",
            "--workspace", str(workspace(tmp_path)), "--json",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert events[-1]["type"] == "run_finished" and events[-1]["answer"] == "3 findings"
    assert events[0]["options"]["allowed_tools"] == ["read", "list_files"]
