"""Prompts, seed by seed (issue 34, item 8): seed 002's own template is a custom template,
rendered as written by the compat PromptBuilder; every native prompt carries token-limit
guidance; native runs keep the iteration in the newest message, so the system prompt is
the same at every iteration (docs/seeds.md says why).

Seed lines held here:

- seed 002: "Current iteration: {iteration}/{max_iterations}" and "- [ ] Current iteration
  number shown"
- seed 000: "- System prompt template should be configurable"
- seed 002: "- Consider adding token limit guidance in prompt"
- seed 000: "- Consider token limits when building conversation"
- seed 002: "- Iteration number helps LLM understand progress/urgency"
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.compat import (
    AUTONOMOUS_SKILL_SYSTEM_PROMPT,
    AutonomousConfig,
    AutonomousSkillExecutor,
    PromptBuilder,
)
from loopwright.errors import ConfigurationError
from loopwright.skills import Skill, SkillMetadata, load_skill
from loopwright.testing import ScriptedModel
from loopwright.tools import ToolRegistry, tool


@dataclass
class MockSkill:
    metadata: SkillMetadata
    content: str


@tool(effect="read")
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def call(key: str) -> str:
    return json.dumps({"thought": "look", "action": "lookup", "action_input": {"key": key}})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer, "is_final": True})


SKILL = MockSkill(SkillMetadata("code-review", "Review code"), "Review the code for bugs.")


@pytest.mark.parametrize("given", [None, AUTONOMOUS_SKILL_SYSTEM_PROMPT])
def test_the_seeds_template_is_rendered_as_written(given: str | None) -> None:
    """Seed 002: "Current iteration: {iteration}/{max_iterations}". The compat builder, made
    with the seed's template (or by default), renders it exactly as `str.format` would."""
    builder = PromptBuilder() if given is None else PromptBuilder(given)
    values = {
        "tool_descriptions": "- read: Read a file",
        "available_files_section": "- reference.md: API docs",
        "iteration": 3,
        "max_iterations": 15,
    }
    prompt = builder.build_system_prompt(SKILL, **values)  # type: ignore[arg-type]
    expected = AUTONOMOUS_SKILL_SYSTEM_PROMPT.format(
        skill_name="code-review", skill_content="Review the code for bugs.", **values
    )
    assert prompt == expected and "Current iteration: 3/15" in prompt


def test_a_template_of_ones_own_with_iteration_renders_as_written() -> None:
    """Seed 000: "System prompt template should be configurable"."""
    builder = PromptBuilder(
        "{skill_name}: step {iteration} of {max_iterations}\n{tool_descriptions}"
    )
    prompt = builder.build_system_prompt(SKILL, "- read: Read", "", 2, 9)
    assert prompt == "code-review: step 2 of 9\n- read: Read"
    with pytest.raises(ConfigurationError, match=r"not \{intro\}"):
        PromptBuilder("{intro} {iteration}").build_system_prompt(SKILL, "", "", 1, 2)


@pytest.fixture
def skill(tmp_path: Path) -> Skill:
    folder = tmp_path / "lookup-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: lookup-skill\ndescription: Looks keys up.\n---\nLook up keys.\n",
        encoding="utf-8",
    )
    return load_skill(folder)


async def test_a_native_run_accepts_the_seeds_template_and_keeps_its_prompt_the_same(
    skill: Skill,
) -> None:
    """Seed 002's template as `AutonomousConfig.system_prompt_template` (it was refused for
    naming `{iteration}`): the run's system prompt is the seed's, without its iteration line,
    byte-identical at every model call (the prompt cache stays warm), and the newest message
    says the iteration (seed 002: "Iteration number helps LLM understand progress/urgency")."""
    config = AutonomousConfig(
        max_iterations=7, system_prompt_template=AUTONOMOUS_SKILL_SYSTEM_PROMPT
    )
    model = ScriptedModel([call("a"), final("value of a")])
    executor = AutonomousSkillExecutor(skill, ToolRegistry([lookup]), config=config, model=model)
    assert (await executor.execute_sync("look a up")).success
    first, second = (r.messages[0].content for r in model.requests)
    assert first == second
    assert first.lstrip().startswith("You are executing the 'lookup-skill' skill autonomously.")
    assert "Current iteration" not in first and "Always respond with valid JSON" in first
    assert "[Iteration 1 of at most 7]" in model.requests[0].messages[-1].content
    assert "[Iteration 2 of at most 7]" in model.requests[1].messages[-1].content


@pytest.mark.parametrize("tool_mode", ["prompted", "native"])
async def test_every_native_prompt_carries_token_limit_guidance(tool_mode: str) -> None:
    """Seed 002: "Consider adding token limit guidance in prompt"; seed 000: "Consider token
    limits when building conversation". With the run's context window, its size."""
    model = ScriptedModel(["done"], tool_mode=tool_mode)  # type: ignore[arg-type]
    options = AgentOptions(context_window=8192)
    await AgentExecutor(model, [lookup], options=options).run("find k")
    system = model.requests[0].messages[0].content
    rule = (
        "- Mind the token limit (this conversation holds at most 8,192 tokens): keep each "
        "reply short, quote only the part of a tool result you need, and read a big file in parts"
    )
    assert rule in system
    plain = ScriptedModel(["done"], tool_mode=tool_mode)  # type: ignore[arg-type]
    await AgentExecutor(plain, [lookup]).run("find k")
    assert "- Mind the token limit: keep each reply short" in plain.requests[0].messages[0].content
