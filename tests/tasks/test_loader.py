"""Task files: YAML and Markdown load; every validation error names the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest
from task_helpers import TEST_TOOLS, load, write_task

from loopwright.errors import TaskParseError
from loopwright.tasks import load_task

GOOD = """
name: tidy
trigger_keywords: [tidy, notes]
inputs:
  file: notes.txt
steps:
  - name: measure
    type: tool
    tool: count_lines
    args_from:
      path: inputs.file
  - name: ok
    type: gate
    condition: results.measure.lines > 1
    message_template: "Tidy {results.measure.lines} lines?"
"""


def test_yaml_task_loads_with_fields_and_lines(tmp_path: Path) -> None:
    task = load(tmp_path, GOOD).definition
    assert task.name == "tidy"
    assert task.trigger_keywords == ("tidy", "notes")
    assert [s.name for s in task.steps] == ["measure", "ok"]
    assert task.steps[0].args_from == {"path": "inputs.file"}
    assert task.steps[1].line == 11
    assert task.inputs == {"file": "notes.txt"}


def test_markdown_task_takes_its_body_as_description(tmp_path: Path) -> None:
    text = "---\n" + GOOD.strip() + "\n---\n# Tidy\n\nMakes notes tidy.\n"
    task = load(tmp_path, text, "tidy.md").definition
    assert task.description.startswith("# Tidy")
    assert task.steps[1].line == 12  # one more: the opening '---'


def expect_error(
    tmp_path: Path, text: str, line: int, *words: str, name: str = "task.yaml"
) -> None:
    """The load fails and one of its problems is at `line` with all of `words`."""
    path = write_task(tmp_path, text, name)
    with pytest.raises(TaskParseError) as info:
        load_task(path, TEST_TOOLS)
    problems = getattr(info.value, "problems", [info.value])
    matching = [p for p in problems if p.line == line and all(w in p.message for w in words)]
    assert matching, str(info.value)
    assert all(p.file_path == str(path) for p in matching)
    assert any(
        line_text.startswith(f"{path}:{line}: ") for line_text in str(info.value).splitlines()
    )


def test_unknown_step_type_names_file_and_line(tmp_path: Path) -> None:
    expect_error(
        tmp_path,
        """
        name: t
        steps:
          - name: a
            type: shell
        """,
        4,
        "unknown step type 'shell'",
    )


def test_unknown_tool_names_file_and_line(tmp_path: Path) -> None:
    expect_error(
        tmp_path,
        """
        name: t
        steps:
          - name: a
            type: tool
            tool: rm_rf
        """,
        3,
        "unknown tool 'rm_rf'",
        "count_lines",
    )


def test_args_from_pointing_to_a_later_step(tmp_path: Path) -> None:
    expect_error(
        tmp_path,
        """
        name: t
        steps:
          - name: a
            type: tool
            tool: shout
            args_from:
              text: results.b.value
          - name: b
            type: tool
            tool: shout
            args: {text: hi}
        """,
        7,
        "args_from 'text'",
        "runs later",
    )


def test_args_from_pointing_to_a_missing_step(tmp_path: Path) -> None:
    expect_error(
        tmp_path,
        """
        name: t
        steps:
          - name: a
            type: tool
            tool: shout
            args_from:
              text: results.nowhere
        """,
        7,
        "does not exist",
    )


def test_args_from_must_be_a_path(tmp_path: Path) -> None:
    expect_error(
        tmp_path,
        """
        name: t
        steps:
          - name: a
            type: tool
            tool: shout
            args_from:
              text: inputs.a == 1
        """,
        7,
        "expected a path",
    )


@pytest.mark.parametrize(
    "condition, words",
    [
        ("results.a.lines >", "not a valid expression"),
        ("__import__('os').system('x')", "function call"),
        ("inputs.n + 1 > 2", "arithmetic"),
        ("os.name == 'nt'", "unknown name 'os'"),
        ("results.later.ok", "runs later"),
    ],
)
def test_bad_condition_names_file_and_line(tmp_path: Path, condition: str, words: str) -> None:
    expect_error(
        tmp_path,
        f"""
        name: t
        steps:
          - name: a
            type: tool
            tool: shout
            args: {{text: hi}}
            condition: "{condition}"
          - name: later
            type: tool
            tool: shout
            args: {{text: hi}}
        """,
        7,
        "bad condition" if words != "runs later" else "condition",
        words,
    )


def test_yaml_syntax_error_has_a_line(tmp_path: Path) -> None:
    expect_error(tmp_path, "name: t\nsteps:\n  - name: [a\n", 4, "not valid YAML")


def test_unknown_field_is_named(tmp_path: Path) -> None:
    expect_error(
        tmp_path,
        """
        name: t
        steps:
          - name: a
            type: tool
            tol: shout
        """,
        5,
        "unknown step field 'tol'",
    )


def test_duplicate_step_and_missing_steps(tmp_path: Path) -> None:
    expect_error(tmp_path, "name: t\nsteps: []\n", 2, "non-empty list")
    expect_error(
        tmp_path,
        """
        name: t
        steps:
          - {name: a, type: gate}
          - {name: a, type: gate}
        """,
        4,
        "two steps are named 'a'",
    )


def test_markdown_without_front_matter(tmp_path: Path) -> None:
    expect_error(tmp_path, "# just a title\n", 1, "front matter", name="t.md")


def test_hooks_are_found_by_convention_and_checked(tmp_path: Path) -> None:
    write_task(
        tmp_path,
        "---\nsteps:\n  - {name: check, type: tool, tool: shout, args: {text: x}}\n---\n",
        "hooks/pre-analysis.md",
    )
    write_task(tmp_path, "---\n---\nSay that all went well.\n", "hooks/post-task.md")
    task = load(tmp_path, GOOD).definition
    assert task.hooks["pre-task"].steps[0].tool == "shout"
    post = task.hooks["post-task"].steps[0]
    assert (post.type, post.description) == ("agent", "Say that all went well.")


def test_a_hook_with_an_unknown_tool_names_the_hook_file(tmp_path: Path) -> None:
    hook = write_task(
        tmp_path,
        "---\nsteps:\n  - name: x\n    type: tool\n    tool: nope\n---\n",
        "hooks/pre-task.md",
    )
    with pytest.raises(TaskParseError) as info:
        load(tmp_path, GOOD)
    assert info.value.file_path == str(hook)
    assert info.value.line == 3


TOOL_FILE_TASK = """
name: counted
steps:
  - name: add
    type: tool
    tool: bump
    args: {}
"""


def test_a_tool_file_named_whole_and_by_function_is_imported_once(tmp_path: Path) -> None:
    imports = tmp_path / "IMPORTS"
    (tmp_path / "counted.py").write_text(
        f"with open({str(imports)!r}, 'a') as imports:\n    imports.write('imported\\n')\n"
        "from loopwright.tools import tool\n\n"
        "@tool\ndef bump() -> str:\n    return 'bumped'\n"
    )
    text = TOOL_FILE_TASK + "tools: [counted.py, counted.py:bump]\n"
    loaded = load_task(write_task(tmp_path, text))
    assert "bump" in loaded.registry.names()
    assert imports.read_text() == "imported\n"  # one module: its hooks and its tools agree


def test_a_tool_file_that_fails_to_import_is_named_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "failing.py").write_text("LIMIT = 1\nRATE = LIMIT / 0\n")
    task = write_task(tmp_path, TOOL_FILE_TASK + "tools: [failing.py]\n")
    with pytest.raises(TaskParseError) as caught:
        load_task(task)
    failing = tmp_path / "failing.py"
    assert (
        f"tools '{failing}': importing {failing} failed at line 2: ZeroDivisionError: "
        "division by zero"
    ) in str(caught.value)


def test_examples_validate() -> None:
    folder = Path(__file__).parents[2] / "examples" / "tasks"
    names = {
        load_task(p).definition.name
        for p in (folder / "rotate-keys.yaml", folder / "release-notes.md")
    }
    assert names == {"rotate-keys", "release-notes"}


def test_a_mistyped_field_gets_a_suggestion(tmp_path: Path) -> None:
    expect_error(
        tmp_path,
        """
        name: t
        steps:
          - name: a
            type: gate
            condtion: inputs.go
        """,
        5,
        "unknown step field 'condtion' (did you mean 'condition'?",
    )
