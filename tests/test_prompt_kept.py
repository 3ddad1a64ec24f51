"""The system prompt is made once per template and parts, and kept (prompts/_builder.py)."""

from __future__ import annotations

from loopwright.messages import ToolSpec
from loopwright.prompts import PromptBuilder, PromptParts
from loopwright.prompts._builder import KEPT_PROMPTS, FileRef

ADD = ToolSpec("add", "Add two integers.", {"type": "object", "properties": {"a": {}}})


def test_the_same_parts_give_the_kept_prompt_and_other_parts_their_own() -> None:
    builder = PromptBuilder()
    parts = PromptParts(tools=(ADD,), tool_mode="native")
    first = builder.build(parts)
    assert builder.build(PromptParts(tools=(ADD,), tool_mode="native")) is first
    assert first == builder.make(parts)
    other = ToolSpec("add", "Add two integers.", {"type": "object", "properties": {"b": {}}})
    assert '"b"' in builder.build(PromptParts(tools=(other,), tool_mode="native"))
    assert builder.build(PromptParts(tools=(ADD,), tool_mode="prompted")) != first


def test_a_changed_template_and_unhashable_parts_are_made_anew() -> None:
    builder = PromptBuilder("{intro}\n{tool_descriptions}")
    parts = PromptParts(tools=(ADD,))
    before = builder.build(parts)
    builder.template = "TOOLS:\n{tool_descriptions}"
    assert builder.build(parts).startswith("TOOLS:\n- add") and before != builder.build(parts)
    listed = PromptParts(
        tools=(ToolSpec("read", "Read a file.", {}),), available_files={"a.md": FileRef("A")}
    )
    assert "- a.md: A" in PromptBuilder().build(listed)


def test_a_builder_keeps_a_bounded_number_of_prompts() -> None:
    builder = PromptBuilder()
    for window in range(1, KEPT_PROMPTS + 11):
        builder.build(PromptParts(tools=(ADD,), context_window=window * 1000))
    assert len(builder._built) == KEPT_PROMPTS
    newest = PromptParts(tools=(ADD,), context_window=(KEPT_PROMPTS + 10) * 1000)
    assert (builder.template, newest) in builder._built
