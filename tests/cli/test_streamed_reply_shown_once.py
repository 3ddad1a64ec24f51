"""A streamed reply is shown once in the live view: as it is generated, not again as its
thought when it is complete."""

from __future__ import annotations

import io
import json

from rich.console import Console

from loopwright import AgentExecutor
from loopwright.cli._view import LiveView
from loopwright.effects import DeltaSettings, EventLog, LiveEffects
from loopwright.events import Event
from loopwright.testing import ScriptedModel

THOUGHT = "The two numbers are small, so I can add them myself"
ANSWER = json.dumps({"thought": THOUGHT, "final_answer": "17 + 25 is 42."})


async def _shown(model: ScriptedModel) -> str:
    """The live view of a run with someone listening (so the model streams), as the CLI
    shows it on a pipe."""
    out = io.StringIO()
    view = LiveView(Console(file=out, width=200, force_terminal=False))

    async def show(event: Event) -> None:
        view.show(event)

    agent = AgentExecutor(model)
    log = EventLog("run_streamed", scrubber=agent.scrubber, sink=show)
    deltas = LiveEffects(log, deltas=DeltaSettings(interval_s=0.0, max_chars=1))
    await agent.run_with(deltas, agent.setup("17 + 25?", agent.run_context("run_streamed")))
    view.close()
    return out.getvalue()


async def test_a_streamed_reply_is_shown_once() -> None:
    shown = await _shown(ScriptedModel([ANSWER], stream_chars=6))
    assert shown.count(THOUGHT) == 1, shown
    assert "Final Answer: 17 + 25 is 42." in shown


async def test_a_reply_that_did_not_stream_shows_its_thought() -> None:
    shown = await _shown(ScriptedModel([ANSWER]))
    assert shown.count(THOUGHT) == 1, shown
