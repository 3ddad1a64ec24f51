"""A skill run's prompt names only the tools the run offers: a skill with supporting files
reads them with its own `read` (its folder only) when the user offers none."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.prompts import PromptBuilder, PromptParts
from loopwright.skills import AutonomousSkillExecutor, ContextLoader, load_skill
from loopwright.testing import ScriptedModel
from loopwright.tools import BUILTIN_TOOLS, ToolRegistry

EXAMPLE = Path(__file__).parents[2] / "examples" / "skills" / "code-review"
READ_SENTENCES = ("'read' tool", '"action": "read"')


def step(tool: str, **args: object) -> str:
    return json.dumps({"thought": "next", "action": tool, "action_input": args})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def test_without_tools_the_skill_reads_its_own_files_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.json"
    replies = [step("read", path="checklist.md"), step("read", path="app.py"), final("done")]
    script.write_text(json.dumps(replies))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("SECRET_OF_THE_WORKSPACE = 1\n")
    code = main(
        ["run", "app.py", "--skill", str(EXAMPLE), "--model", f"scripted:{script}",
         "--workspace", str(workspace), "--json"]
    )  # fmt: skip
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert events[0]["tools"] == ["read"]
    calls = [e for e in events if e["type"] == "tool_call"]
    assert "Mutable default arguments" in calls[0]["result"]  # the skill's checklist.md
    refused = calls[1]["result"]
    assert calls[1]["is_error"]
    assert "SECRET_OF_THE_WORKSPACE" not in json.dumps(events)
    assert "is not a file of the skill folder" in refused
    assert "reads only the skill's own files" in refused


def test_the_prompt_of_a_skill_run_without_tools_offers_the_read_it_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["prompt", "--skill", str(EXAMPLE), "app.py"]) == 0
    prompt = capsys.readouterr().out
    tools = prompt[prompt.index("AVAILABLE TOOLS:") :]  # the last section
    assert "): Read a file of the skill's folder" in tools
    assert tools.count("\n- read(") == 1
    assert "AVAILABLE SUPPORTING FILES (load on-demand with 'read' tool):" in prompt
    assert "WORKSPACE:" not in prompt  # its read does not reach the workspace


def test_offering_read_gives_the_builtin_that_reads_the_workspace_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["prompt", "--skill", str(EXAMPLE), "--tools", "read", "app.py"]) == 0
    prompt = capsys.readouterr().out
    assert "): Read a text file in the workspace" in prompt
    assert "): Read a file of the skill's folder" not in prompt


def test_a_prompt_without_tools_never_names_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompt", "What is 6 * 7?"]) == 0
    prompt = capsys.readouterr().out
    assert not [s for s in READ_SENTENCES if s in prompt] and "read(" not in prompt
    assert '"final_answer": "6 * 7 = 42"' in prompt  # the format still has an example


@pytest.mark.parametrize("mode", ["prompted", "native"])
def test_a_prompt_without_read_says_its_example_read_is_an_illustration(
    mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The concrete read example, headed as an illustration (with placeholders instead, the
    embedded model answered the README's question with the placeholder answer)."""
    assert main(["prompt", "--tools", "echo", "--tool-mode", mode, "What is 6 * 7?"]) == 0
    prompt = capsys.readouterr().out
    heading = "EXAMPLE (its read tool is an illustration: call only the tools listed below)"
    example = prompt[prompt.index(heading) :]
    for call in ('"action": "read"', "from read:", "read(path="):
        assert prompt.count(call) == example.count(call)
    reads = 2 if mode == "prompted" else 1  # revision 5's prompted example makes two calls
    assert example.count('"action": "read"') + example.count("read(path=") == reads
    assert "'read' tool" not in prompt and "- read:" not in prompt  # not offered, not listed


def test_supporting_files_are_listed_only_when_read_is_offered(tmp_path: Path) -> None:
    skill_dir = tmp_path / "code-review"
    shutil.copytree(EXAMPLE, skill_dir)
    (skill_dir / "notes.md").write_text("# n\nsecond\nthird\n")
    files = ContextLoader().load(load_skill(skill_dir)).available_files
    parts = PromptParts(skill_name="s", skill_content="Do it.", available_files=files)
    without = PromptBuilder().build(parts)
    assert "notes.md" not in without and not [s for s in READ_SENTENCES if s in without]
    echo = BUILTIN_TOOLS["echo"].spec
    read = BUILTIN_TOOLS["read"].spec
    assert "notes.md" not in PromptBuilder().build(
        PromptParts(**{**parts.__dict__, "tools": (echo, read), "allowed_tools": ("echo",)})
    )
    with_read = PromptBuilder().build(PromptParts(**{**parts.__dict__, "tools": (read,)}))
    assert "- notes.md: n (3 lines)" in with_read


async def test_the_python_api_adds_the_skills_own_read_to_a_registry_without_one(
    tmp_path: Path,
) -> None:
    skill_dir = tmp_path / "code-review"
    shutil.copytree(EXAMPLE, skill_dir)
    given = ToolRegistry([BUILTIN_TOOLS["list_files"]])
    model = ScriptedModel([step("read", path="checklist.md"), final("ok")])
    executor = AutonomousSkillExecutor(
        load_skill(skill_dir), given, model=model, workspace=tmp_path
    )
    result = await executor.execute_sync("app.py")
    assert result.success
    assert "Mutable default arguments" in model.requests[1].messages[-1].content
    assert given.names() == ["list_files"]  # the caller's registry is not changed


async def test_a_skill_run_recorded_before_its_own_read_rebuilds_without_it() -> None:
    """A RunSpec of version 1 to 3 (AgentOptions.revision 1) was recorded when a skill run
    without `--tools read` had no tool at all: it must rebuild the same tools to replay or
    resume as it ran; a new run gets the skill's own `read`."""
    from loopwright.agent import AgentOptions
    from loopwright.events import RunStartedEvent
    from loopwright.runtime import RunSpec, Runtime

    async def tools_of(spec: RunSpec) -> list[str]:
        """The tools a run of `spec` offers, as its run_started records them."""
        runtime = Runtime()
        try:
            handle = runtime.start(spec, model=ScriptedModel([final("done")]))
            await handle.wait()
            started = runtime.store.events(handle.run_id)[0]
            assert isinstance(started, RunStartedEvent)
            return started.tools
        finally:
            runtime.close()

    old = RunSpec(request="app.py", skill=str(EXAMPLE), options=AgentOptions(revision=1))
    assert await tools_of(old) == []
    assert await tools_of(RunSpec(request="app.py", skill=str(EXAMPLE))) == ["read"]
