"""Seed 000's AutonomousSkillExecutor uses the ToolExecutor it is given, with its settings
(timeout, output limit, scrubber, even its class), and its system prompt template is
configurable (issue 21, section 2)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from loopwright.compat import AUTONOMOUS_SKILL_SYSTEM_PROMPT
from loopwright.errors import ConfigurationError
from loopwright.messages import ToolCall, ToolResult
from loopwright.safety.scrub import Scrubber
from loopwright.skills import AutonomousConfig, AutonomousSkillExecutor, Skill, load_skill
from loopwright.testing import ScriptedModel
from loopwright.tools import ToolExecutor, ToolRegistry, tool

SECRET = "team-password-7431-zebra"


@tool(effect="read")
def dump(size: int) -> str:
    """Return `size` characters and the team password."""
    return f"password={SECRET} " + "x" * size


@tool(effect="read")
async def hang(seconds: float) -> str:
    """Wait a while."""
    await asyncio.sleep(seconds)
    return "woke up"


def call(name: str, **args: object) -> str:
    return json.dumps({"thought": f"call {name}", "action": name, "action_input": args})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


@pytest.fixture
def skill(tmp_path: Path) -> Skill:
    folder = tmp_path / "dumper"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: dumper\ndescription: Dumps things.\n---\nDump what is asked.\n",
        encoding="utf-8",
    )
    return load_skill(folder)


class CountingExecutor(ToolExecutor):
    calls: list[str]

    async def execute(self, call: ToolCall) -> ToolResult:
        self.calls.append(call.name)
        return await super().execute(call)


async def test_the_given_tool_executor_and_its_settings_are_used(skill: Skill) -> None:
    registry = ToolRegistry([dump, hang])
    given = CountingExecutor(
        registry, scrubber=Scrubber([SECRET]), timeout=0.3, max_output_chars=120
    )
    given.calls = []
    model = ScriptedModel([call("dump", size=500), call("hang", seconds=30), final("done")])
    executor = AutonomousSkillExecutor(skill, registry, given, model=model)
    started = time.monotonic()
    result = await executor.execute_sync("dump 500")
    elapsed = time.monotonic() - started

    assert result.success
    assert given.calls == ["dump", "hang"]  # the caller's class ran every call
    dumped, hung = result.steps
    assert SECRET not in dumped.result and "[REDACTED" in dumped.result  # its scrubber
    assert "output truncated" in dumped.result and len(dumped.result) < 250  # its limit
    assert hung.is_error and "timed out after 0.3s" in hung.result  # its timeout
    assert elapsed < 10  # the 30 s call was cut at 0.3 s
    assert all(SECRET not in m.content for r in model.requests for m in r.messages)


async def test_each_run_gets_its_own_copy(skill: Skill) -> None:
    registry = ToolRegistry([dump])
    given = CountingExecutor(registry, timeout=5)
    given.calls = []
    for run in range(2):
        model = ScriptedModel([call("dump"), final(f"run {run}")])  # no size: a failed call
        result = await AutonomousSkillExecutor(skill, registry, given, model=model).execute_sync(
            "x"
        )
        assert result.answer == f"run {run}"
        assert "Attempt 1." in result.steps[0].result  # attempts are counted per run
        assert result.run_id.startswith("run_")
    assert given.calls == ["dump", "dump"]
    assert given.context.run_id != result.run_id  # the caller's own context is not touched


async def test_the_system_prompt_template_is_configurable(skill: Skill) -> None:
    template = AUTONOMOUS_SKILL_SYSTEM_PROMPT.replace(
        "Current iteration: {iteration}/{max_iterations}", "You have {max_iterations} iterations."
    )
    config = AutonomousConfig(max_iterations=7, system_prompt_template=template)
    model = ScriptedModel([final("ok")])
    executor = AutonomousSkillExecutor(skill, ToolRegistry([dump]), config=config, model=model)
    assert (await executor.execute_sync("go")).success
    system = model.requests[0].messages[0].content
    assert "You are executing the 'dumper' skill autonomously." in system
    assert "SKILL INSTRUCTIONS:\nDump what is asked." in system
    assert "- dump: Return `size` characters and the team password." in system
    assert "You have 7 iterations." in system
    assert '"is_final": false' in system  # the seed's literal JSON braces


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("Hello {nosuch}", "unknown placeholder {nosuch}"),
        ("Unbalanced {", "system prompt template"),
    ],
)
def test_a_template_that_cannot_be_filled_is_refused_up_front(template: str, problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem.replace("{", r"\{").replace("}", r"\}")):
        AutonomousConfig(system_prompt_template=template)
