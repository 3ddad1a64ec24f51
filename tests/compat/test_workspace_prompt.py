"""Seed 003's system prompt for runs with workspace tools: a read -> understand -> modify ->
verify example written with the run's own tool names, and the workspace context
(repository, branch, files the request names)."""

from __future__ import annotations

import json
from pathlib import Path

from loopwright import AgentExecutor
from loopwright.messages import ModelResponse
from loopwright.parsing import ParsedAction, ParsedFinal, parse_reply
from loopwright.testing import ScriptedModel
from loopwright.tools import BUILTIN_TOOLS, OPT_IN_TOOLS, tool


@tool(effect="read")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "payments"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/fix-retries\n", encoding="utf-8")
    (root / "settings.py").write_text("TIMEOUT = 30\nRETRIES = 3\n", encoding="utf-8")
    return root


async def test_a_workspace_run_gets_the_example_and_the_context(tmp_path: Path) -> None:
    model = ScriptedModel([json.dumps({"final_answer": "ok"})])
    tools = [*BUILTIN_TOOLS.values(), *OPT_IN_TOOLS.values()]
    await AgentExecutor(model, tools, workspace=repo(tmp_path)).run("Raise RETRIES in settings.py")
    system = model.requests[0].messages[0].content
    assert "- Git repository: payments (branch: fix-retries)" in system
    assert "  - settings.py (2 lines)" in system
    example = system[system.index("EXAMPLE (work on files: read, understand, modify, verify)") :]
    replies = [
        line.removeprefix("Assistant: ")
        for line in example.splitlines()
        if line.startswith("Assistant: ")
    ]
    outcomes = [parse_reply(ModelResponse(text=reply)) for reply in replies]
    assert [o.calls[0].name for o in outcomes if isinstance(o, ParsedAction)] == [
        "read",
        "edit_file",
        "run_command",
    ]
    assert isinstance(outcomes[-1], ParsedFinal)
    edit = outcomes[1]
    assert isinstance(edit, ParsedAction)
    assert set(edit.calls[0].arguments) == {"path", "old_text", "new_text"}  # edit_file's own names
    assert "notes.txt" not in system  # the plain example gives way to the file-work one


async def test_verify_by_reading_when_commands_are_not_allowed(tmp_path: Path) -> None:
    model = ScriptedModel([json.dumps({"final_answer": "ok"})])
    await AgentExecutor(model, BUILTIN_TOOLS.values(), workspace=repo(tmp_path)).run(
        "fix settings.py"
    )
    system = model.requests[0].messages[0].content
    assert '"action": "run_command"' not in system
    assert system.count('"action": "read"') == 2  # read first, read again to verify


async def test_native_mode_gets_the_example_with_calls_as_name_and_arguments(
    tmp_path: Path,
) -> None:
    """Seed 003: "Few-shot examples of tool calling patterns (read file → understand →
    modify → verify)", in native-tools mode too: each call is shown as `name(arguments)`,
    which the parser chain reads as the call should a model copy it into its text."""
    model = ScriptedModel(["done"], tool_mode="native")
    await AgentExecutor(model, BUILTIN_TOOLS.values(), workspace=repo(tmp_path)).run(
        "fix settings.py"
    )
    system = model.requests[0].messages[0].content
    example = system[system.index("EXAMPLE (work on files: read, understand, modify, verify") :]
    calls = [
        line.removeprefix("Assistant, calling a tool: ")
        for line in example.splitlines()
        if line.startswith("Assistant, calling a tool: ")
    ]
    outcomes = [parse_reply(ModelResponse(text=call)) for call in calls]
    assert [o.calls[0].name for o in outcomes if isinstance(o, ParsedAction)] == [
        "read",
        "edit_file",
        "read",
    ]
    edit = outcomes[1]
    assert isinstance(edit, ParsedAction)
    assert edit.calls[0].arguments == {
        "path": "settings.py",
        "old_text": "RETRIES = 3",
        "new_text": "RETRIES = 5",
    }
    assert "Assistant: settings.py now sets RETRIES = 5 (was 3)." in example
    assert '"action":' not in system  # no prompted JSON in a native prompt


async def test_no_workspace_tools_no_workspace_example(tmp_path: Path) -> None:
    model = ScriptedModel([json.dumps({"final_answer": "5"})])
    await AgentExecutor(model, [add], workspace=repo(tmp_path)).run("2 + 3 in settings.py")
    system = model.requests[0].messages[0].content
    assert "WORKSPACE:" not in system and "work on files" not in system
    # the plain prompted example stays, its read said to be an illustration (it has no read)
    assert "EXAMPLE (its read tool is an illustration" in system and "notes.txt" in system


async def test_read_only_file_tools_keep_the_plain_example(tmp_path: Path) -> None:
    model = ScriptedModel([json.dumps({"final_answer": "ok"})])
    read_only = [BUILTIN_TOOLS["read"], BUILTIN_TOOLS["list_files"]]
    await AgentExecutor(model, read_only, workspace=repo(tmp_path)).run("what is in settings.py")
    system = model.requests[0].messages[0].content
    assert "WORKSPACE:" in system and "work on files" not in system
