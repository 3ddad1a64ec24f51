"""Workers with different tool code: a run started on a worker with one version of its tool
file, whose next step reaches a worker that loads a changed version (a renamed argument),
is refused there: its workflow stops with a message that says what to do, the changed
tool never runs, and the run lists as interrupted at once (resumable). Each worker names
its build id when it starts."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
from pathlib import Path

import pytest
from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers, action, final
from temporalio.client import WorkflowFailureError
from trial_helpers import until

from loopwright.engines.temporal import EngineSettings
from loopwright.runtime import RunSpec
from loopwright.store import open_store

FAST = EngineSettings(heartbeat_timeout_s=5.0)


async def test_a_worker_with_other_tool_code_refuses_the_run(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    tools = tmp_path / "tools.py"
    shutil.copy(TOOLS_FILE, tools)
    release, out = tmp_path / "release", tmp_path / "out.txt"
    script = tmp_path / "script.json"
    replies = [action("hold", path=str(release)),
               action("append_line", path=str(out), text="line1"), final("done")]  # fmt: skip
    script.write_text(json.dumps(replies), encoding="utf-8")
    spec = RunSpec(request="hold, then write", model=f"scripted:{script}",
                   tools=(f"{tools}:hold", f"{tools}:append_line"),
                   workspace=str(tmp_path))  # fmt: skip
    old = workers.start()
    handle = await runs.start(spec, settings=FAST)
    await until(Path(f"{release}.held").exists, workers.logs, 60)  # on the old worker

    source = tools.read_text()  # a deploy renames an argument of the run's tool
    tools.write_text(source.replace("path: str, text: str", "path: str, line: str"))
    old.send_signal(signal.SIGKILL)
    old.wait()
    workers.start()  # loads the changed file: the held call is retried here
    with pytest.raises(WorkflowFailureError) as failed:
        await asyncio.wait_for(handle.result(), 120)

    message = str(failed.value.cause)
    assert f"run {handle.id} started with tool code" in message
    assert f"loopwright runs resume {handle.id} --engine temporal" in message
    assert not out.exists()  # the changed tool never ran
    store = open_store(workers.store)
    try:
        record = store.get_run(handle.id)
    finally:
        store.close()
    assert record is not None and record.status == "interrupted"  # at once, resumable
    builds = re.findall(r"build (loopwright-[0-9a-f]{16})", workers.logs())
    assert len(builds) == 2 and len(set(builds)) == 1  # same loopwright, named at start
