"""A tool that takes a ToolContext gets one per call: the call's id, the run's RunContext,
and the run's record of modified files (shared by every call of the run)."""

from __future__ import annotations

import json
from pathlib import Path

from loopwright import AgentExecutor
from loopwright.testing import ScriptedModel
from loopwright.tools import ToolContext, tool

SEEN: list[tuple[str, str, str, int]] = []


@tool(effect="write")
def touch(ctx: ToolContext, name: str) -> str:
    """Note a write.

    Args:
        name: the file's name
    """
    assert ctx.run is not None
    ctx.record_write(name, None, "0" * 64)
    SEEN.append((ctx.call_id, ctx.run_id, ctx.run.run_id, len(ctx.modified_files)))
    return "ok"


def call(name: str) -> str:
    return json.dumps({"thought": "t", "action": "touch", "action_input": {"name": name}})


async def test_each_call_gets_its_id_and_the_run_context(tmp_path: Path) -> None:
    SEEN.clear()
    final = json.dumps({"thought": "d", "final_answer": "done"})
    agent = AgentExecutor(ScriptedModel([call("a"), call("b"), final]), [touch], workspace=tmp_path)
    result = await agent.run("touch two", run_id="run_ctx")
    assert SEEN == [("call_1_0", "run_ctx", "run_ctx", 1), ("call_2_0", "run_ctx", "run_ctx", 2)]
    assert result.modified_files == ("a", "b")
