"""ToolExecutor: validation naming the argument, timeouts, truncation, failures as observations."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

import pytest

from loopwright.errors import ModelRetry, ToolError
from loopwright.messages import ToolCall
from loopwright.tools import ToolExecutor, ToolRegistry, tool


@tool
def greet(name: str, times: int = 1, loud: bool | None = None) -> str:
    """Greet someone."""
    text = " ".join([f"hello {name}"] * times)
    return text.upper() if loud else text


@dataclass
class Box:
    width: int
    label: str = ""


@tool
def box_area(box: Box, boxes: list[Box] | None = None) -> int:
    """Area of a box."""
    return box.width * box.width


@tool
def fails_with_tool_error() -> str:
    """Fails politely."""
    raise ToolError("the disk is full")


@tool
def asks_to_retry() -> str:
    """Asks again."""
    raise ModelRetry("use a smaller number")


@tool
def crashes() -> str:
    """Crashes."""
    return str(1 // 0)


@tool(timeout=0.05)
async def hangs() -> str:
    """Never answers."""
    await asyncio.Event().wait()
    return "never"


release = threading.Event()


@tool(timeout=0.05)
def blocks_in_thread() -> str:
    """A sync tool that blocks."""
    release.wait(5)
    return "late"


@tool
def huge() -> str:
    """A lot of output."""
    return "a" * 5000 + "TAIL"


def executor(**kwargs: object) -> ToolExecutor:
    registry = ToolRegistry(
        [greet, box_area, fails_with_tool_error, asks_to_retry, crashes, hangs, huge]
    )
    registry.register(blocks_in_thread)
    return ToolExecutor(registry, **kwargs)  # type: ignore[arg-type]


async def run(ex: ToolExecutor, tool_name: str, /, **arguments: object) -> tuple[str, bool]:
    result = await ex.execute(ToolCall(id="c1", name=tool_name, arguments=dict(arguments)))
    return result.content, result.is_error


async def test_valid_call_and_nullable_optional() -> None:
    assert await run(executor(), "greet", name="ann", times=2, loud=None) == (
        "hello ann hello ann",
        False,
    )


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("greet", {}, "invalid arguments: missing required argument 'name'"),
        (
            "greet",
            {"name": "a", "color": "red"},
            "invalid arguments: unexpected argument 'color' (this tool takes: name, times, loud)",
        ),
        (
            "greet",
            {"name": "a", "times": "2"},
            "invalid arguments (times): '2' is not of type 'integer' (got string)",
        ),
        (
            "greet",
            {"name": "a", "times": True},
            "invalid arguments (times): True is not of type 'integer' (got boolean)",
        ),
        (
            "greet",
            {"name": 1, "loud": 2},
            "invalid arguments (name): 1 is not of type 'string' (got integer)",
        ),
        (
            "greet",
            {"name": "a", "loud": 2},
            "invalid arguments (loud): 2 is not of type 'boolean' or 'null'",
        ),
        ("box_area", {"box": {}}, "invalid arguments: missing required argument 'box/width'"),
        (
            "box_area",
            {"box": {"width": "x"}},
            'invalid arguments (box/width): "x" is not of type "integer"',
        ),
        (
            "box_area",
            {"box": {"width": 1, "depth": 2}},
            "invalid arguments: unexpected argument 'box/depth'",
        ),
    ],
)
async def test_invalid_arguments_name_the_argument(
    name: str, arguments: dict[str, object], expected: str
) -> None:
    content, is_error = await run(executor(), name, **arguments)
    assert is_error
    assert content.startswith(f"Tool '{name}' failed: {expected}")
    assert "Attempt 1." in content


async def test_dataclass_argument_is_converted() -> None:
    assert await run(executor(), "box_area", box={"width": 3}) == ("9", False)


async def test_every_failure_becomes_an_observation_with_attempt_count() -> None:
    ex = executor()
    cases = {
        "fails_with_tool_error": "failed: the disk is full",
        "asks_to_retry": "failed: use a smaller number",
        "crashes": "failed: ZeroDivisionError: integer division or modulo by zero",
        "hangs": "failed: timed out after 0.05s",
    }
    for name, expected in cases.items():
        content, is_error = await run(ex, name)
        assert is_error and expected in content, content
        assert "Attempt 1. Please try again with different parameters" in content
    content, _ = await run(ex, "crashes")
    assert "Attempt 2." in content


async def test_an_unknown_tool_points_to_the_real_tools_and_a_direct_answer() -> None:
    content, is_error = await run(executor(), "calculate", expression="2+2")
    assert is_error
    first, second = content.splitlines()
    assert first.startswith("There is no tool named 'calculate'. The only tools are: ")
    assert "asks_to_retry" in first and "box_area" in first
    assert second == (
        "If none of them fits the task, do not call a tool: give the final answer "
        "from what you know."
    )
    assert "try again" not in content


async def test_sync_tool_that_blocks_is_timed_out() -> None:
    try:
        content, is_error = await run(executor(), "blocks_in_thread")
    finally:
        release.set()
    assert is_error and "timed out after 0.05s" in content


async def test_executor_timeout_applies_when_tool_has_none() -> None:
    @tool
    async def slow() -> str:
        """Slow."""
        await asyncio.Event().wait()
        return ""

    ex = ToolExecutor(ToolRegistry([slow]), timeout=0.02)
    content, is_error = await run(ex, "slow")
    assert is_error and "timed out after 0.02s" in content


async def test_huge_output_is_truncated_and_says_so() -> None:
    ex = executor(max_output_chars=300)
    result = await ex.execute(ToolCall(id="c", name="huge", arguments={}))
    assert result.truncated and not result.is_error
    assert "output truncated: 4,704 of 5,004 characters omitted" in result.content
    assert result.content.startswith("a" * 100) and result.content.endswith("TAIL")


async def test_bad_arguments_tell_the_model_how_to_call_the_tool() -> None:
    content, is_error = await run(executor(), "greet", times=2)
    assert is_error
    assert (
        'greet takes {"name": "string", "times": "integer", "loud": ["boolean", "null"]} '
        "(required: name)"
    ) in content
