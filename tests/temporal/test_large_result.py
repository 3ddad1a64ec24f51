"""A 5 MB tool result: kept whole in the Postgres content store, while the run (its events,
the model's next request) gets the same truncated text as on the embedded engine, and no
workflow history event comes near Temporal's 2 MB payload limit."""

from __future__ import annotations

import json
from pathlib import Path

from temporal_helpers import TemporalRuns, Workers, action, final

from loopwright import ToolCall
from loopwright.engines.temporal._content import ContentStore
from loopwright.events import ToolCallEvent
from loopwright.runtime import RunSpec
from loopwright.store import open_store
from loopwright.tools import ToolContext, ToolExecutor, ToolRegistry, resolve_tools

TOOLS = Path(__file__).with_name("run_tools.py")
SIZE = 5 * 1024 * 1024


async def embedded_result(workspace: Path) -> str:
    """The `big` call's observation as the embedded engine's tool executor gives it."""
    executor = ToolExecutor(
        ToolRegistry(resolve_tools([f"{TOOLS}:big"])), context=ToolContext("r", workspace)
    )
    result = await executor.execute(ToolCall(id="c", name="big", arguments={"size": SIZE}))
    assert result.truncated
    return result.content


async def test_a_5_mb_tool_result_is_stored_whole_and_the_run_completes(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([action("big", size=SIZE), final("read it")]))
    spec = RunSpec(
        request="read a big result",
        model=f"scripted:{script}",
        tools=(f"{TOOLS}:big",),
        workspace=str(tmp_path),
    )
    workers.start()
    handle = await runs.start(spec)
    outcome = await handle.result()
    assert outcome["status"] == "completed"

    store = open_store(workers.store)
    content = ContentStore(workers.store)
    try:
        (finished,) = [e for e in store.events(handle.id) if isinstance(e, ToolCallEvent)]
        full = content.full_result(f"{handle.id}:{finished.call_id}")
    finally:
        content.close()
        store.close()
    assert full is not None and len(full) == SIZE
    assert finished.truncated
    assert finished.result == await embedded_result(tmp_path)  # what the model reads

    history = await handle.fetch_history()
    largest = max(event.ByteSize() for event in history.events)
    total = sum(event.ByteSize() for event in history.events)
    assert largest < 200_000, f"a history event of {largest:,} bytes"
    assert total < 1_000_000, f"a history of {total:,} bytes"
