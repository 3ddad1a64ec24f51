"""Revision 4's layout of the system prompt: what every run shares comes first, the run's
own tools last, so a model server's prompt cache (the longest prefix a prompt shares with
the one before) reuses the shared part when the next run has other tools."""

from __future__ import annotations

import pytest

from loopwright.messages import ToolSpec
from loopwright.prompts import PromptBuilder, PromptParts

ADD = ToolSpec("add", "Add two numbers.", {"type": "object", "properties": {"a": {}, "b": {}}})
WEATHER = ToolSpec("weather", "The weather in a city.", {"type": "object", "properties": {}})
READ = ToolSpec("read", "Read a file.", {"type": "object", "properties": {"path": {}}})


def shared_prefix(one: str, other: str) -> str:
    """The text two prompts start with (a server's cache keeps tokens, not characters: the
    same idea)."""
    size = next(
        (i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b),
        min(len(one), len(other)),
    )
    return one[:size]


def prompt(*tools: ToolSpec, revision: int = 4, builder: PromptBuilder | None = None) -> str:
    return (builder or PromptBuilder()).build(PromptParts(tools=tools, revision=revision))


@pytest.mark.parametrize("mode", ["prompted", "native"])
def test_runs_with_other_tools_share_the_prompt_up_to_the_tools(mode: str) -> None:
    one, other = (
        PromptBuilder().build(PromptParts(tools=(tool,), tool_mode=mode))  # type: ignore[arg-type]
        for tool in (ADD, WEATHER)
    )
    shared = shared_prefix(one, other)
    assert shared.endswith("AVAILABLE TOOLS:\n- "), shared[-80:]
    for section in ("EXECUTION FORMAT:", "RULES:", "EXAMPLE"):
        assert section in shared, section
    assert one.index("add") > one.index("EXAMPLE")  # the tools come after the example


def test_revision_3_kept_the_tools_first() -> None:
    """The layout runs recorded with RunSpec 5 had, for their replay: there, two runs with
    other tools share the intro only."""
    one, other = (prompt(tool, revision=3) for tool in (ADD, WEATHER))
    shared = shared_prefix(one, other)
    assert "EXECUTION FORMAT:" not in shared and shared.endswith("AVAILABLE TOOLS:\n- ")
    assert "tools listed above" in one  # its example pointed up at the tools
    assert "tools listed below" in prompt(ADD)


def test_the_example_points_at_the_tools_where_a_template_of_your_own_puts_them() -> None:
    tools_first = PromptBuilder("{intro}\n{tool_descriptions}\n{examples_section}")
    assert "tools listed above" in prompt(ADD, builder=tools_first)
    tools_last = PromptBuilder("{intro}\n{examples_section}\n{tool_descriptions}")
    assert "tools listed below" in prompt(ADD, builder=tools_last)
    with_read = prompt(READ, builder=tools_last)  # read offered: the example is the run's own
    assert "illustration" not in with_read and "EXAMPLE:" in with_read
