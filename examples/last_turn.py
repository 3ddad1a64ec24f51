"""The last turn: a run that repeats a tool call is stopped, then asked once for its answer.

    python examples/last_turn.py

A scripted model (it stands in for a small local model that loops) looks up the same key
three times in a row. The repetition guard stops the tool calls; with the last turn (on by
default) the model is asked once more, with no tool offered, and its answer from the result
it already has ends the run `completed`. With `last_turn=False` the same run ends
`stopped: repetition`, its steps kept.
"""

from __future__ import annotations

import asyncio
import json

from loopwright import AgentExecutor, AgentOptions, tool
from loopwright.events import Event, WarningEvent
from loopwright.testing import ScriptedModel


@tool(effect="read")
async def lookup(key: str) -> str:
    """Look a key up in the settings."""
    return {"timeout": "30 s"}.get(key, "no such key")


SAME_CALL = json.dumps(
    {"thought": "look it up", "action": "lookup", "action_input": {"key": "timeout"}}
)
ANSWER = json.dumps({"thought": "I have it", "final_answer": "The timeout is 30 s."})


async def main() -> None:
    async def show(event: Event) -> None:
        if isinstance(event, WarningEvent):
            print(f"  warning: {event.message}")

    model = ScriptedModel([SAME_CALL, SAME_CALL, SAME_CALL, ANSWER])
    result = await AgentExecutor(model, [lookup]).run("What is the timeout?", on_event=show)
    print(
        f"last turn on:  {result.status}, {len(result.steps)} tool calls, answer: {result.answer}"
    )

    model = ScriptedModel([SAME_CALL, SAME_CALL, SAME_CALL])
    options = AgentOptions(last_turn=False)
    plain = await AgentExecutor(model, [lookup], options=options).run("What is the timeout?")
    print(f"last turn off: {plain.status} ({plain.reason}), {len(plain.steps)} tool calls kept")


if __name__ == "__main__":
    asyncio.run(main())
