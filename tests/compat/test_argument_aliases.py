"""The built-in file tools take the seeds' argument names too (seed 002's own example calls
`read` with `{"file_path": ...}`), through a declared alias mechanism on `@tool`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright import AgentExecutor
from loopwright.errors import ToolDefinitionError
from loopwright.messages import ToolCall
from loopwright.testing import ScriptedModel
from loopwright.tools import BUILTIN_TOOLS, ToolContext, ToolExecutor, ToolRegistry, tool


def seed_action(tool_name: str, **args: object) -> str:
    """A reply in seed 002's documented response format."""
    return json.dumps(
        {"thought": "next step", "action": tool_name, "action_input": args, "is_final": False}
    )


async def test_seed_002_example_reads_a_file_with_file_path(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("buy milk\n", encoding="utf-8")
    model = ScriptedModel(
        [
            seed_action("read", file_path="notes.txt"),
            json.dumps({"thought": "done", "final_answer": "milk", "is_final": True}),
        ]
    )
    agent = AgentExecutor(model, BUILTIN_TOOLS.values(), workspace=tmp_path)
    result = await agent.run("What is in notes.txt?")
    assert result.status == "completed"
    assert result.steps[0].arguments == {"file_path": "notes.txt"}  # recorded as the model sent it
    assert (result.steps[0].result, result.steps[0].is_error) == ("buy milk\n", False)


async def test_edit_file_takes_file_path_old_string_new_string(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n", encoding="utf-8")
    executor = ToolExecutor(
        ToolRegistry(BUILTIN_TOOLS.values()), context=ToolContext(workspace=tmp_path)
    )
    call = ToolCall(
        "c1", "edit_file", {"file_path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
    )
    result = await executor.execute(call)
    assert not result.is_error, result.content
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == "x = 2\n"
    assert list(executor.context.modified_files) == ["app.py"]


async def test_an_alias_and_its_parameter_together_are_an_error_observation(tmp_path: Path) -> None:
    executor = ToolExecutor(
        ToolRegistry(BUILTIN_TOOLS.values()), context=ToolContext(workspace=tmp_path)
    )
    result = await executor.execute(ToolCall("c1", "read", {"path": "a", "file_path": "b"}))
    assert result.is_error
    assert "'path' and its alias 'file_path' were both given; give only 'path'" in result.content


async def test_aliases_on_a_custom_async_tool_and_unknown_names_still_refused() -> None:
    @tool(effect="read", aliases={"q": "query"})
    async def search(query: str, limit: int = 3) -> str:
        """Search."""
        return f"{query}:{limit}"

    executor = ToolExecutor(ToolRegistry([search]))
    ok = await executor.execute(ToolCall("c1", "search", {"q": "cats", "limit": 2}))
    assert (ok.content, ok.is_error) == ("cats:2", False)
    wrong_type = await executor.execute(ToolCall("c2", "search", {"q": 5}))
    assert wrong_type.is_error and "(query): 5 is not of type 'string'" in wrong_type.content
    missing = await executor.execute(ToolCall("c3", "search", {"text": "cats"}))
    assert missing.is_error and "missing required argument 'query'" in missing.content
    assert "q" not in search.parameters["properties"]  # the schema shows the parameter only


def test_a_bad_alias_declaration_is_a_definition_error() -> None:
    def fetch(url: str) -> str:
        return url

    with pytest.raises(
        ToolDefinitionError, match="alias 'link' names 'uri', which is not a parameter"
    ):
        tool(aliases={"link": "uri"})(fetch)
    with pytest.raises(ToolDefinitionError, match="alias 'url' is already a parameter"):
        tool(aliases={"url": "url"})(fetch)


def test_the_built_in_file_tools_declare_the_seed_names() -> None:
    assert BUILTIN_TOOLS["read"].aliases == {"file_path": "path"}
    assert BUILTIN_TOOLS["write_file"].aliases == {"file_path": "path"}
    assert BUILTIN_TOOLS["edit_file"].aliases["old_string"] == "old_text"
