"""run_command (opt-in, argv without a shell, timeout, capped output) and `--tools` specs."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from loopwright.errors import ConfigurationError, ToolDefinitionError
from loopwright.messages import ToolCall
from loopwright.tools import OPT_IN_TOOLS, ToolContext, ToolExecutor, ToolRegistry, resolve_tools
from loopwright.tools.command import run_command

PY = sys.executable


async def run(tmp_path: Path, /, **arguments: Any) -> tuple[str, bool]:
    executor = ToolExecutor(
        ToolRegistry(OPT_IN_TOOLS.values()), context=ToolContext(workspace=tmp_path)
    )
    result = await executor.execute(ToolCall(id="c", name="run_command", arguments=arguments))
    return result.content, result.is_error


@pytest.mark.subprocess
async def test_argv_runs_without_a_shell(tmp_path: Path) -> None:
    content, is_error = await run(
        tmp_path, command=[PY, "-c", "import sys; print(sys.argv[1:])", "$HOME", "a b"]
    )
    assert not is_error
    assert content.splitlines()[1:] == ["[exit code 0]", "['$HOME', 'a b']"]


@pytest.mark.subprocess
async def test_string_is_split_not_shelled_unless_shell_true(tmp_path: Path) -> None:
    content, _ = await run(tmp_path, command="echo $HOME | cat")
    assert content.endswith("$HOME | cat\n")
    content, _ = await run(tmp_path, command="echo hi | tr a-z A-Z", shell=True)
    assert content.endswith("[exit code 0]\nHI\n")


@pytest.mark.subprocess
async def test_nonzero_exit_is_reported_and_cwd_is_confined(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    content, is_error = await run(
        tmp_path,
        command=[PY, "-c", "import os; print(os.getcwd()); raise SystemExit(3)"],
        cwd="sub",
    )
    assert not is_error and "[exit code 3]" in content and content.rstrip().endswith("sub")
    content, is_error = await run(tmp_path, command=["ls"], cwd="..")
    assert is_error and "is outside the workspace" in content


@pytest.mark.subprocess
async def test_timeout_kills_the_program(tmp_path: Path) -> None:
    marker = tmp_path / "survived"
    script = (
        f"import time; print('started', flush=True); time.sleep(30); open({str(marker)!r}, 'w')"
    )
    started = time.monotonic()
    content, is_error = await run(tmp_path, command=[PY, "-c", script], timeout_s=1)
    assert time.monotonic() - started < 4.0  # limit 1 s; the program would run 30 s
    assert is_error and "timed out after 1s and was killed" in content
    assert "output so far:\nstarted" in content
    assert not marker.exists()


@pytest.mark.subprocess
async def test_huge_output_is_capped_while_reading(tmp_path: Path) -> None:
    command = [PY, "-c", "print('x' * 1_000_000 + 'END')"]
    direct = await run_command.invoke({"command": command}, ToolContext(workspace=tmp_path))
    assert "bytes of output omitted" in direct and direct.rstrip().endswith("END")
    assert len(direct) < 3 * 16_000  # the first and last 16 KB (docs/tools.md), and a note
    content, is_error = await run(tmp_path, command=command)
    assert not is_error and "omitted" in content and content.rstrip().endswith("END")


@pytest.mark.subprocess
async def test_missing_program_and_empty_command(tmp_path: Path) -> None:
    content, is_error = await run(tmp_path, command=["no-such-program-xyz"])
    assert is_error and "command not found: 'no-such-program-xyz'" in content
    content, is_error = await run(tmp_path, command=[])
    assert is_error and "the command is empty" in content


# -- --tools specs ---------------------------------------------------------------------------


def test_builtin_names() -> None:
    names = [t.name for t in resolve_tools("echo, read,list_files,write_file,edit_file,grep,glob")]
    assert names == ["echo", "read", "list_files", "write_file", "edit_file", "grep", "glob"]


def test_run_command_needs_explicit_opt_in() -> None:
    with pytest.raises(
        ConfigurationError, match=r"'run_command' runs programs .* --allow-commands"
    ):
        resolve_tools("read,run_command")
    assert [t.name for t in resolve_tools("run_command", allow_commands=True)] == ["run_command"]


def test_module_function_spec() -> None:
    (tool,) = resolve_tools(["loopwright.tools.builtin:echo"])
    assert tool.name == "echo"
    (plain,) = resolve_tools("loopwright.prompts.errors:build_error_observation")
    assert plain.parameters["required"] == ["tool_name", "error", "retry_count"]


def test_file_function_spec(tmp_path: Path) -> None:
    source = tmp_path / "my_tools.py"
    source.write_text('def shout(text: str) -> str:\n    """Shout."""\n    return text.upper()\n')
    (tool,) = resolve_tools(f"{source}:shout")
    assert (tool.name, tool.description, tool.function("hi")) == ("shout", "Shout.", "HI")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "nope",
            "unknown tool 'nope': use a built-in (echo, edit_file, glob, grep, list_files, read, run_command, write_file), module:function or path/to/file.py:function",
        ),
        (
            "no_such_module_xyz:f",
            "tool 'no_such_module_xyz:f': cannot import module 'no_such_module_xyz'",
        ),
        (
            "loopwright.tools.builtin:nothing",
            "module 'loopwright.tools.builtin' has no function 'nothing' (it has: echo, list_files, read)",
        ),
        ("missing.py:f", "tool 'missing.py:f': file not found: missing.py"),
        ("loopwright.tools.command:MAX_COMMAND_TIMEOUT_S", "float is not a function or a tool"),
        (":f", "expected module:function or file.py:function"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        resolve_tools(spec)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("text", "failure"),
    [
        ("def f(:\n", "at line 1: SyntaxError: invalid syntax"),
        (
            "import os\n\nPORT = int(os.environ.get('NO_SUCH_PORT', 'x'))\n",
            "at line 3: ValueError: invalid literal for int() with base 10: 'x'",
        ),
    ],
)
def test_a_file_that_fails_to_import_is_named_with_its_line(
    tmp_path: Path, text: str, failure: str
) -> None:
    """The one wording of every loader of a Python file (tools, task tool files, --agent,
    eval tools): the file and its own line where importing it failed."""
    failing = tmp_path / "failing.py"
    failing.write_text(text)
    with pytest.raises(ConfigurationError) as caught:
        resolve_tools(f"{failing}:f")
    assert str(caught.value) == f"tool '{failing}:f': importing {failing} failed {failure}"


def test_file_spec_errors(tmp_path: Path) -> None:
    untyped = tmp_path / "untyped.py"
    untyped.write_text("def f(x):\n    return x\n\ndef g(y: int) -> int:\n    return y\n")
    with pytest.raises(ToolDefinitionError, match="parameter 'x' needs a type hint"):
        resolve_tools(f"{untyped}:f")
    with pytest.raises(ConfigurationError, match=r"has no function 'h' \(it has: f, g\)"):
        resolve_tools(f"{untyped}:h")
