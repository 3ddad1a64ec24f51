"""§4 of the hardening review: time limits that hold, each asserted on the wall clock.

Real processes: `yes` with endless output, children that `setsid` out of the process
group, `sleep` under a verifier and a skill's !`command`, a sync tool stuck in its thread,
and the CLI with such a tool.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from loopwright.agent import CommandVerifier
from loopwright.messages import ToolCall
from loopwright.run_context import RunContext
from loopwright.skills import DynamicInjector
from loopwright.tools import (
    BUILTIN_TOOLS,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolRegistry,
    ToolThreads,
)
from loopwright.tools.command import run_command

PLAIN = Path(__file__).parent / "plain_tools.py"
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split(") ")[1].startswith("Z"))


async def command(root: Path, **arguments: Any) -> tuple[str, bool, float]:
    executor = ToolExecutor(ToolRegistry([run_command]), context=ToolContext("r", workspace=root))
    started = time.monotonic()
    result = await executor.execute(ToolCall(id="c", name="run_command", arguments=arguments))
    return result.content, result.is_error, time.monotonic() - started


@pytest.mark.subprocess
async def test_endless_output_does_not_hold_off_the_timeout(tmp_path: Path) -> None:
    content, is_error, elapsed = await command(tmp_path, command=["yes"], timeout_s=1)
    assert is_error and "timed out after 1s" in content and "y\ny\n" in content
    assert elapsed < 4.0, elapsed  # the limit, plus at most the grace the reaper gets


@pytest.mark.subprocess
async def test_a_child_that_setsids_is_killed_at_the_timeout(tmp_path: Path) -> None:
    script = "setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' & sleep 60"
    content, is_error, elapsed = await command(tmp_path, command=script, shell=True, timeout_s=0.5)
    assert is_error and "timed out" in content
    assert elapsed < 3.0, elapsed
    assert not alive(int((tmp_path / "escaped.pid").read_text()))


@pytest.mark.subprocess
async def test_a_child_that_setsids_does_not_outlive_its_command(tmp_path: Path) -> None:
    script = "setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' & sleep 0.2; echo done"
    content, is_error, elapsed = await command(tmp_path, command=script, shell=True, timeout_s=20)
    assert not is_error and "[exit code 0]" in content and "done" in content
    assert elapsed < 5.0, elapsed  # not held until the escaped child ends
    assert not alive(int((tmp_path / "escaped.pid").read_text()))


@pytest.mark.subprocess
async def test_the_verifier_kills_the_whole_tree_at_its_timeout(tmp_path: Path) -> None:
    verifier = CommandVerifier(
        "setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' & sleep 5", timeout_s=0.05
    )
    started = time.monotonic()
    result = await verifier(tmp_path)
    elapsed = time.monotonic() - started
    assert result.outcome == "fail" and "timed out after 0.05s" in result.output
    assert elapsed < 2.5, elapsed  # was 5 s: only the shell was killed
    if (tmp_path / "escaped.pid").exists():
        assert not alive(int((tmp_path / "escaped.pid").read_text()))


@pytest.mark.subprocess
async def test_a_skill_command_is_killed_at_its_timeout(tmp_path: Path) -> None:
    injector = DynamicInjector(enabled=True, timeout_s=0.05)
    content = "before\n!`sleep 5`\nafter\n"
    started = time.monotonic()
    text = await injector.inject(content, tmp_path)
    assert time.monotonic() - started < 2.5
    assert "[command timed out after 0.05s: sleep 5]" in text and text.endswith("after\n")
    started = time.monotonic()
    text = injector.inject_sync(content, tmp_path)
    assert time.monotonic() - started < 2.5
    assert "[command timed out after 0.05s: sleep 5]" in text


def stuck(seconds: int) -> str:
    """Block the thread for a while.

    Args:
        seconds: how long
    """
    threading.Event().wait(seconds)
    return "woke"


def quick(text: str) -> str:
    """Answer at once.

    Args:
        text: anything
    """
    return text


async def test_a_stuck_sync_tool_fills_only_its_own_pool(tmp_path: Path) -> None:
    registry = ToolRegistry([Tool.from_function(stuck), Tool.from_function(quick)])
    tenant_a, tenant_b = ToolThreads(2, name="a"), ToolThreads(2, name="b")

    async def run(pool: ToolThreads, name: str, **arguments: Any) -> tuple[str, float]:
        run = RunContext("r", tmp_path, tool_threads=pool)  # the run's tenant's pool
        executor = ToolExecutor(registry, context=ToolContext.of_run(run), timeout=0.2)
        started = time.monotonic()
        result = await executor.execute(ToolCall(id="c", name=name, arguments=arguments))
        return result.content, time.monotonic() - started

    for _ in range(4):  # more stuck calls than tenant A has threads
        content, elapsed = await run(tenant_a, "stuck", seconds=3)
        assert "timed out after 0.2s" in content and elapsed < 1.0
    assert tenant_a.threads == 2  # bounded: the stuck calls did not grow it
    content, elapsed = await run(tenant_b, "quick", text="hello")
    assert content == "hello" and elapsed < 1.0  # tenant B is not affected
    read = ToolExecutor(ToolRegistry(BUILTIN_TOOLS.values()), context=ToolContext("r", tmp_path))
    (tmp_path / "a.txt").write_text("file tools still answer")
    started = time.monotonic()
    result = await read.execute(ToolCall(id="c", name="read", arguments={"path": "a.txt"}))
    assert result.content == "file tools still answer" and time.monotonic() - started < 1.0


@pytest.mark.subprocess
def test_the_cli_exits_at_the_runs_limit_with_a_stuck_sync_tool(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    call = {"thought": "block", "action": "block_forever", "action_input": {"seconds": 120}}
    script.write_text(json.dumps([json.dumps(call), json.dumps({"final_answer": "x"})]))
    argv = [
        sys.executable, "-m", "loopwright", "run", "block",
        "--model", f"scripted:{script}",
        "--tools", f"{PLAIN}:block_forever",
        "--workspace", str(tmp_path),
        "--timeout", "1",
        "--json",
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=110, check=False)
    exited = time.time()
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert events and events[-1]["type"] == "run_finished", done.stdout[-2000:]
    assert events[-1]["status"] != "completed"
    # from the run's start (the interpreter's start-up, slow on a loaded machine, is not
    # the run's), well under the 120 s the tool would block
    elapsed = exited - events[0]["ts"]
    assert events[0]["type"] == "run_started" and elapsed < 15.0, elapsed


@pytest.mark.subprocess
def test_cancelling_a_command_kills_it(tmp_path: Path) -> None:
    async def main() -> float:
        task = asyncio.create_task(
            run_command.invoke(
                {"command": "echo $$ > shell.pid; exec sleep 60", "shell": True, "timeout_s": 60},
                ToolContext("r", workspace=tmp_path),
            )
        )
        while not (tmp_path / "shell.pid").exists() or not (tmp_path / "shell.pid").read_text():
            await asyncio.sleep(0.01)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(main()) < 3.0
    assert not alive(int((tmp_path / "shell.pid").read_text()))
