"""A run resumed after its workflow ended between a tool's commit and the workflow hearing of
it: the call (not idempotent) is not run again and not reported "effect unknown": its
worker reads the result committed in the content store, and the run's log has it."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from run_tools import KILL_MARK
from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers, action, final
from trial_helpers import HeldLink, until

from loopwright.engines.temporal import EngineSettings
from loopwright.engines.temporal._content import ContentStore
from loopwright.events import RunFinishedEvent, ToolCallEvent, ToolCallStartedEvent
from loopwright.runtime import RunSpec
from loopwright.store import open_store

FAST = EngineSettings(heartbeat_timeout_s=5.0)
MODE = {"LOOPWRIGHT_TEST_KILL_ONCE": "after-commit"}


def _committed(url: str, key: str) -> bool:
    content = ContentStore(url)
    try:
        found = content.tool_call(key)
    finally:
        content.close()
    return found is not None and found[0] == "done"


async def test_a_resumed_run_reads_a_committed_result_of_a_call_it_did_not_hear_of(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    out, text = tmp_path / "out.txt", f"line1 {KILL_MARK}"
    script = tmp_path / "script.json"
    script.write_text(json.dumps([action("append_line", path=str(out), text=text),
                                  final("wrote it")]), encoding="utf-8")  # fmt: skip
    spec = RunSpec(request="write a line", model=f"scripted:{script}",
                   tools=(f"{TOOLS_FILE}:append_line",), workspace=str(tmp_path))  # fmt: skip
    link = HeldLink(workers.address)
    store = open_store(workers.store)
    try:
        first = workers.start(via=await link.start(), **MODE)
        handle = await runs.start(spec, settings=FAST)
        await until(Path(f"{out}.hung").exists, workers.logs, 180)  # its effect is done
        (started,) = [e for e in store.events(handle.id) if isinstance(e, ToolCallStartedEvent)]
        link.hold()  # the worker's report to Temporal waits
        Path(f"{out}.go").write_text("go")  # the call returns: its result is committed
        key = f"{handle.id}:{started.call_id}"
        await until(lambda: _committed(workers.store, key), workers.logs, 60)
        first.send_signal(signal.SIGKILL)
        first.wait()
        await link.cut()
        await handle.terminate("the test stops it before it heard of the call")
        workers.start()
        resumed = await runs.runtime(FAST).resume(handle.id)
        await resumed.wait()
        events = store.events(handle.id)
    finally:
        store.close()
        await link.close()

    assert out.read_text() == f"{text}\n"  # one effect
    assert Path(f"{out}.attempts").read_text() == f"{text}\n"  # never run again
    (call,) = [e for e in events if isinstance(e, ToolCallEvent)]
    assert (call.result, call.is_error) == (f"appended {text!r}", False)
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "completed"
