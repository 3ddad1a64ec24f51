"""Workspace tools inside agent runs: modified files in the result, the WORKSPACE prompt
section (seed 003), and a resumed run keeping the same prompt."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.agent import AgentExecutor
from loopwright.events import Event, RunStartedEvent, ToolCallEvent
from loopwright.testing import ScriptedModel
from loopwright.tools import BUILTIN_TOOLS, workspace_context


def call(name: str, **args: Any) -> str:
    return json.dumps({"thought": f"use {name}", "action": name, "action_input": args})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def file_tools() -> list[Any]:
    return [BUILTIN_TOOLS[name] for name in ("read", "write_file", "edit_file")]


async def test_run_that_writes_then_edits_reports_modified_files(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            call("write_file", path="notes/plan.md", content="# Plan\nstep one\n"),
            call("edit_file", path="notes/plan.md", old_text="step one", new_text="step 1"),
            final("wrote the plan"),
        ]
    )
    agent = AgentExecutor(model, file_tools(), workspace=tmp_path)
    result = await agent.run("Write a plan to notes/plan.md")
    assert result.status == "completed"
    assert result.modified_files == ("notes/plan.md",)
    assert (tmp_path / "notes" / "plan.md").read_text() == "# Plan\nstep 1\n"
    assert [s.is_error for s in result.steps] == [False, False]


def make_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "feature-x", str(root)], check=True)


@pytest.mark.subprocess
def test_workspace_context_names_root_repo_branch_and_existing_files(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    make_repo(repo)
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("a\nb\n")
    (repo / "Makefile").write_text("all:\n")
    text = workspace_context(repo, "Fix src/app.py, see Makefile and docs/missing.md, not ../x")
    assert text.splitlines() == [
        "WORKSPACE:",
        f"- Root: {repo.resolve()} (file tools take paths relative to it)",
        "- Git repository: shop (branch: feature-x)",
        "- Files named in the request:",
        "  - src/app.py (2 lines)",
        "  - Makefile (1 lines)",
    ]


def test_workspace_context_without_git_or_named_files(tmp_path: Path) -> None:
    text = workspace_context(tmp_path, "say hello")
    assert (
        text == f"WORKSPACE:\n- Root: {tmp_path.resolve()} (file tools take paths relative to it)"
    )


@pytest.mark.subprocess
async def test_system_prompt_carries_workspace_section_and_stays_identical(tmp_path: Path) -> None:
    make_repo(tmp_path)
    (tmp_path / "app.py").write_text("x = 1\n")
    model = ScriptedModel([call("read", path="app.py"), call("read", path="app.py"), final("ok")])
    await AgentExecutor(model, file_tools(), workspace=tmp_path).run("Review app.py")
    systems = {r.messages[0].content for r in model.requests}
    assert len(systems) == 1
    system = systems.pop()
    assert f"- Root: {tmp_path.resolve()}" in system
    assert f"- Git repository: {tmp_path.name} (branch: feature-x)" in system
    assert "  - app.py (1 lines)" in system


async def test_agents_without_workspace_tools_get_no_workspace_section(tmp_path: Path) -> None:
    model = ScriptedModel([final("hi")])
    await AgentExecutor(model, [BUILTIN_TOOLS["echo"]], workspace=tmp_path).run("see app.py")
    assert "WORKSPACE:" not in model.requests[0].messages[0].content


async def test_resumed_run_keeps_the_recorded_workspace_section(tmp_path: Path) -> None:
    request = "Create notes.md with a greeting"
    first = ScriptedModel([call("write_file", path="notes.md", content="hello\n"), final("done")])
    events: list[Event] = []

    async def keep(event: Event) -> None:
        events.append(event)

    await AgentExecutor(first, file_tools(), workspace=tmp_path).run(request, on_event=keep)
    assert isinstance(events[0], RunStartedEvent)
    assert "notes.md" not in events[0].options["workspace_context"]
    # notes.md exists now; a resume from the log must still build the original prompt
    upto = next(i for i, e in enumerate(events) if isinstance(e, ToolCallEvent))
    second = ScriptedModel(  # the same script: it goes on after the reply the log served
        [call("write_file", path="notes.md", content="hello\n"), final("done")]
    )
    result = await AgentExecutor(second, file_tools(), workspace=tmp_path).run(
        request, recorded=events[: upto + 1]
    )
    assert result.status == "completed"
    assert second.requests[0].messages[0].content == first.requests[0].messages[0].content
