"""Seed 002 (system prompt template and ReAct format): its own three tests, changed only in
imports and mocks, then a test for each line of its contract (issue 21, section 1)."""

# mypy: allow-untyped-defs
# (the seed's own tests keep their unannotated signatures; their bodies are checked)

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loopwright.compat import AUTONOMOUS_SKILL_SYSTEM_PROMPT, PromptBuilder
from loopwright.compat import ReActJsonParser as _Parser
from loopwright.skills import ContextLoader, LoadedContext, SkillMetadata, load_skill
from loopwright.tools import tool


# --- mocks (the seed's mock_skill, MockTool, LoadedContext) -------------------------------
@dataclass
class MockSkill:
    metadata: SkillMetadata
    content: str


@dataclass
class MockTool:
    name: str
    description: str
    parameters: object = None


mock_skill = MockSkill(SkillMetadata("code-review", "Review code"), "Review the code for bugs.")
builder = PromptBuilder()


# --- the seed's own tests -------------------------------------------------------------------
def test_build_system_prompt():
    """System prompt should include all required sections."""
    builder = PromptBuilder()
    prompt = builder.build_system_prompt(
        skill=mock_skill,
        tool_descriptions="- read: Read a file",
        available_files_section="- reference.md: API docs",
        iteration=1,
        max_iterations=15,
    )

    assert mock_skill.metadata.name in prompt
    assert mock_skill.content in prompt
    assert "- read: Read a file" in prompt
    assert "reference.md" in prompt
    assert "1/15" in prompt
    assert "JSON format" in prompt


def test_format_tool_descriptions():
    """Tool descriptions should be properly formatted."""
    builder = PromptBuilder()
    tools = [MockTool(name="read", description="Read a file")]
    result = builder.format_tool_descriptions(tools)
    assert "- read: Read a file" in result


def test_available_files_section_empty():
    """Empty available files should return empty string."""
    context = LoadedContext(available_files={}, skill_dir=Path("/skills/code-review"))
    section = builder.build_available_files_section(context)
    assert section == ""


# --- the contract, line by line -------------------------------------------------------------
def test_template_has_the_seed_placeholders_and_literal_json() -> None:
    for name in (
        "skill_name",
        "skill_content",
        "available_files_section",
        "tool_descriptions",
        "iteration",
        "max_iterations",
    ):
        assert "{" + name + "}" in AUTONOMOUS_SKILL_SYSTEM_PROMPT
    assert "Current iteration: {iteration}/{max_iterations}" in AUTONOMOUS_SKILL_SYSTEM_PROMPT
    prompt = builder.build_system_prompt(mock_skill, "- read: Read a file", "", 3, 15)
    assert '"action_input": {"arg1": "value1", "arg2": "value2"}' in prompt
    assert '"is_final": true' in prompt
    assert "Current iteration: 3/15" in prompt
    assert "You are executing the 'code-review' skill autonomously." in prompt


def test_the_example_reply_in_the_template_is_read_by_the_engine() -> None:
    """The template's own tool-call example is an action for the one parser chain."""
    prompt = builder.build_system_prompt(mock_skill, "", "", 1, 15)
    example = prompt.split("1. When you need to call a tool:\n", 1)[1].split("\n\n", 1)[0]
    action = _Parser().parse(example)
    assert action.tool == "tool_name"  # type: ignore[union-attr]
    assert action.tool_input == {"arg1": "value1", "arg2": "value2"}  # type: ignore[union-attr]


def test_format_tool_descriptions_parameters_line_and_allowed_tools() -> None:
    @tool
    def read(path: str) -> str:
        """Read a file.

        Args:
            path: the file
        """
        return path

    tools = [
        read,
        MockTool("grep", "Search files", {"pattern": "str"}),
        MockTool("echo", "Echo text"),
    ]
    text = builder.format_tool_descriptions(tools)
    lines = text.splitlines()
    assert lines[0] == "- read: Read a file."
    assert lines[1].startswith("  Parameters: ") and '"path"' in lines[1]
    assert lines[2:] == [
        "- grep: Search files",
        "  Parameters: {'pattern': 'str'}",
        "- echo: Echo text",
    ]
    assert builder.format_tool_descriptions(tools, allowed_tools=["echo"]) == "- echo: Echo text"
    assert (
        builder.format_tool_descriptions(tools, allowed_tools=[]) == text
    )  # seed: [] filters nothing


def test_available_files_section_lines(tmp_path: Path) -> None:
    skill_dir = tmp_path / "code-review"
    skill_dir.mkdir()
    (skill_dir / "SKILL.md").write_text("---\nname: code-review\ndescription: d\n---\nReview.\n")
    (skill_dir / "reference.md").write_text("# API docs\n" + "line\n" * 1199)
    (skill_dir / "checklist.md").write_text("")
    context = ContextLoader().load(load_skill(skill_dir))
    section = builder.build_available_files_section(context)
    assert section.splitlines() == [
        "AVAILABLE SUPPORTING FILES (load on-demand with 'read' tool):",
        "- checklist.md",
        "- reference.md: API docs (1,200 lines)",
        "",
        f"Skill directory: {skill_dir}",
        "Use the 'read' tool to load these files when you need their content.",
    ]


def test_build_error_observation() -> None:
    text = builder.build_error_observation("read", "no such file", 2)
    assert text == (
        "Tool 'read' failed: no such file\n"
        "Attempt 2. Please try again with different parameters or use an alternative approach."
    )


def test_available_files_section_takes_duck_typed_entries() -> None:
    """The seed's own file entries are plain objects with `description` and
    `estimated_lines`, not FileRef: the section reads them all the same."""
    from types import SimpleNamespace

    context = LoadedContext(
        skill_dir=Path("/skills/code-review"),
        available_files={"notes.md": SimpleNamespace(description="Notes", estimated_lines=30)},  # type: ignore[dict-item]
    )
    section = builder.build_available_files_section(context)
    assert "- notes.md: Notes (30 lines)" in section.splitlines()


# --- the error observation, as a run sends it ----------------------------------------------
@tool
def fetch(url: str) -> str:
    """Fetch a page."""
    raise RuntimeError(f"{url} is down")


async def _observations_of_two_failed_calls(revision: int | None) -> list[str]:
    """What the model reads after each of two failed calls in a run (prompted mode)."""
    import json

    from loopwright import AgentExecutor, AgentOptions
    from loopwright.testing import ScriptedModel

    def call(url: str) -> str:
        return json.dumps({"thought": "t", "action": "fetch", "action_input": {"url": url}})

    answer = json.dumps({"thought": "t", "final_answer": "both are down"})
    model = ScriptedModel([call("a"), call("b"), answer], tool_mode="prompted")
    options = AgentOptions() if revision is None else AgentOptions(revision=revision)
    await AgentExecutor(model, [fetch], options=options).run("fetch a and b")
    return [request.messages[-1].content for request in model.requests[1:]]


async def test_a_run_sends_the_error_then_advice_that_follows_it_not_the_seeds_text():
    """Seed 002's "When tool fails, append to conversation: build_error_observation(...)":
    a run at the default prompt sends the error, then advice that follows it (retry when it
    asks for that, fix a wrong argument, else answer), with no attempt count and no "try
    again with different parameters" (that contradicted errors asking for the same call)."""
    first, second = await _observations_of_two_failed_calls(None)
    for observation, url in ((first, "a"), (second, "b")):
        assert f"Tool 'fetch' failed: RuntimeError: {url} is down\n" in observation
        assert "If the error asks you to retry, make the same call again" in observation
        assert "Attempt" not in observation and "different parameters" not in observation


async def test_a_run_pinned_to_an_older_prompt_sends_the_seeds_observation():
    """Runs pinned to the prompt before that change (and runs recorded with it, which
    replay as they ran) send the seed's text, counting the tool's failures."""
    first, second = await _observations_of_two_failed_calls(5)
    assert builder.build_error_observation("fetch", "RuntimeError: a is down", 1) in first
    assert builder.build_error_observation("fetch", "RuntimeError: b is down", 2) in second
