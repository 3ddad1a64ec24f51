"""One run's slow insert holds up no other run on its worker: the insert of one run's
events waits (in the real PostgreSQL server, until the test lets it through) while two
other runs on the same worker start, call a tool and finish. Before, one lock of the
worker serialised every run's appends and the activities waiting for it did not
heartbeat: the other runs' attempts timed out and the runs failed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from store_faults import BlockedInsert
from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers, action, final
from temporalio.client import WorkflowExecutionStatus

from loopwright.engines.temporal import EngineSettings
from loopwright.runtime import RunSpec

FAST = EngineSettings(heartbeat_timeout_s=5.0)


def _spec(folder: Path, tool: str) -> RunSpec:
    folder.mkdir()
    out = folder / "out.txt"
    script = folder / "script.json"
    replies = [action(tool, path=str(out), text="one"), final("wrote one line")]
    script.write_text(json.dumps(replies), encoding="utf-8")
    return RunSpec(request="write one line", model=f"scripted:{script}",
                   tools=(f"{TOOLS_FILE}:{tool}",), workspace=str(folder))  # fmt: skip


async def test_a_slow_insert_of_one_run_fails_no_other_run(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    block = BlockedInsert(workers.store, "append_line")
    try:
        workers.start()
        slow = await runs.start(_spec(tmp_path / "slow", "append_line"), settings=FAST)
        await block.waiting()  # its tool_call_started is being inserted, and waits
        others = [
            await runs.start(_spec(tmp_path / f"other{i}", "put_line"), settings=FAST)
            for i in range(2)
        ]
        outcomes = await asyncio.wait_for(asyncio.gather(*(h.result() for h in others)), 90)
        still = (await slow.describe()).status
        block.release()
        slowed = await asyncio.wait_for(slow.result(), 90)
    finally:
        block.close()

    assert [o["status"] for o in outcomes] == ["completed", "completed"], workers.logs()
    for i in range(2):
        assert (tmp_path / f"other{i}" / "out.txt").read_text() == "one\n"
    assert still == WorkflowExecutionStatus.RUNNING  # they finished while it waited
    assert slowed["status"] == "completed", workers.logs()
    assert (tmp_path / "slow" / "out.txt").read_text() == "one\n"
