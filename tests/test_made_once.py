"""What agents made one per request share instead of making again: the system prompt
(kept by its builder, per template and parts), the options resolved for their tools, the
default scrubber (per state of the environment) and the working directory's Path."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from loopwright import AgentOptions, tool
from loopwright.agent._process import working_directory
from loopwright.messages import ToolSpec
from loopwright.prompts import PromptBuilder, PromptParts
from loopwright.prompts._builder import KEPT_PROMPTS, FileRef
from loopwright.safety.scrub import Scrubber, secret_env_values

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
    assert builder._built is not None and 0 < len(builder._built) <= KEPT_PROMPTS
    newest = PromptParts(tools=(ADD,), context_window=(KEPT_PROMPTS + 10) * 1000)
    assert builder.build(newest) in builder._built.values()


def test_equal_parts_of_other_types_give_their_own_prompt() -> None:
    builder = PromptBuilder()
    as_int = builder.build(PromptParts(tools=(ADD,), context_window=4096))
    as_float = builder.build(PromptParts(tools=(ADD,), context_window=4096.0))  # type: ignore[arg-type]
    assert "4,096 tokens" in as_int and "4,096.0 tokens" in as_float


@tool
def write_note(text: str) -> str:
    """Write a note."""
    return text


def test_options_resolved_for_tools_are_those_replace_gives() -> None:
    options = AgentOptions(max_iterations=3)
    resolved = options.for_tools([write_note])
    assert resolved == dataclasses.replace(
        options, timeout_s=1800.0, progress_signal="observations"
    )
    assert AgentOptions(max_iterations=3).for_tools([write_note]) == resolved
    assert AgentOptions(max_iterations=3).for_tools([]).timeout_s == 600.0
    listed = AgentOptions(allowed_tools=["write_note"])  # type: ignore[arg-type]  # a list
    assert listed.for_tools([write_note]).timeout_s == 1800.0


def test_equal_options_of_other_types_keep_their_own_values() -> None:
    as_int = AgentOptions(temperature=0, tool_timeout_s=60).for_tools([write_note])
    as_float = AgentOptions(temperature=0.0, tool_timeout_s=60.0).for_tools([write_note])
    assert type(as_int.temperature) is int and type(as_int.tool_timeout_s) is int
    assert type(as_float.temperature) is float and type(as_float.tool_timeout_s) is float


class OwnBuilder(PromptBuilder):
    """A subclass whose __init__ does not call PromptBuilder's."""

    def __init__(self) -> None:
        self.template = "{tool_descriptions}"


def test_a_builder_whose_init_does_not_call_the_base_one_still_builds() -> None:
    builder = OwnBuilder()
    assert builder.build(PromptParts(tools=(ADD,))) == builder.make(PromptParts(tools=(ADD,)))
    assert PromptBuilder().build(PromptParts(tools=(ADD,))) != builder.build(PromptParts())


@dataclasses.dataclass(frozen=True)
class TaggedParts(PromptParts):
    tag: str = ""


class TaggedBuilder(PromptBuilder):
    def make(self, parts: PromptParts) -> str:
        return f"{getattr(parts, 'tag', '')}|{super().make(parts)}"


def test_parts_of_a_subclass_with_fields_of_its_own_are_not_taken_for_others() -> None:
    builder = TaggedBuilder()
    assert builder.build(TaggedParts(tools=(ADD,), tag="a")).startswith("a|")
    assert builder.build(TaggedParts(tools=(ADD,), tag="b")).startswith("b|")


@dataclasses.dataclass(frozen=True)
class TaggedOptions(AgentOptions):
    tag: str = ""


def test_options_of_a_subclass_keep_their_class_and_fields() -> None:
    first = TaggedOptions(tag="a").for_tools([write_note])
    second = TaggedOptions(tag="b").for_tools([write_note])
    assert isinstance(first, TaggedOptions) and isinstance(second, TaggedOptions)
    assert type(first) is TaggedOptions and (first.tag, second.tag) == ("a", "b")


def test_the_default_scrubber_is_made_again_when_the_environment_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MADE_ONCE_TOKEN", raising=False)
    before = Scrubber.default()
    assert Scrubber.default() is before
    monkeypatch.setenv("MADE_ONCE_TOKEN", "tok-3f9a1c7e2b")
    after = Scrubber.default()
    assert after is not before and after.scrub("x tok-3f9a1c7e2b").redactions == 1
    assert secret_env_values()["MADE_ONCE_TOKEN"] == "tok-3f9a1c7e2b"  # the same state
    monkeypatch.delenv("MADE_ONCE_TOKEN")
    assert Scrubber.default().scrub("x tok-3f9a1c7e2b").redactions == 0
    assert "MADE_ONCE_TOKEN" not in secret_env_values()


def test_the_working_directory_is_read_at_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    here = working_directory()
    assert here == tmp_path.resolve() and working_directory() is here
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert working_directory() == tmp_path.resolve() / "sub"
