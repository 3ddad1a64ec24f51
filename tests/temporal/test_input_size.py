"""Activity inputs do not grow with the run: a model call at step 40 sends what one at step
10 sends (the new messages and events only; the rest of the conversation is loaded from the
content store by (run_id, call)), with a 20 KB tool result at every step; the events refer
to long tool results in the content store instead of carrying them again."""

from __future__ import annotations

import json
from pathlib import Path

from temporal_helpers import MODEL_CALL, TemporalRuns, Workers, action, final

from loopwright.agent import AgentOptions
from loopwright.runtime import RunSpec

TOOLS = Path(__file__).with_name("run_tools.py")
STEPS = 40
RESULT = 20_000


async def test_model_call_inputs_stay_the_same_size(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    script = tmp_path / "script.json"
    replies = [action("big", size=RESULT - step) for step in range(STEPS)]
    script.write_text(json.dumps([*replies, final("read them all")]))
    spec = RunSpec(
        request="read many results",
        model=f"scripted:{script}",
        tools=(f"{TOOLS}:big",),
        workspace=str(tmp_path),
        options=AgentOptions(max_iterations=STEPS + 5, no_progress_limit=STEPS + 5),
    )
    workers.start()
    handle = await runs.start(spec)
    outcome = await handle.result()
    assert outcome["status"] == "completed" and outcome["steps"] == STEPS

    history = await handle.fetch_history()
    sizes = [
        e.activity_task_scheduled_event_attributes.input.ByteSize()
        for e in history.events
        if e.activity_task_scheduled_event_attributes.activity_type.name == MODEL_CALL
    ]
    print(
        f"model call inputs: call 1 {sizes[0]:,} B, call 10 {sizes[9]:,} B, call {STEPS} {sizes[-2]:,} B; history {sum(e.ByteSize() for e in history.events):,} B in {len(history.events)} events"
    )
    assert len(sizes) == STEPS + 1
    assert sizes[-2] <= sizes[9] * 1.05, f"call 10: {sizes[9]:,} bytes, call {STEPS}: {sizes[-2]:,}"
    assert max(sizes) < 60_000, f"a model call input of {max(sizes):,} bytes"
    total = sum(e.ByteSize() for e in history.events)  # a long tool result is in it once
    assert total < STEPS * 75_000, f"{total:,} bytes of history for {STEPS} steps"
