"""Several calls in one prompted reply: `max_calls_per_reply` lets a small local model ask
for independent calls together, run in order as one step.

    python examples/several_calls.py

A scripted model (it stands in for a local model in prompted mode) is asked the weather in
two cities. With `max_calls_per_reply=4` the prompt offers several calls a reply, one JSON
object a line; the model writes both lookups in one reply and answers after one round of
results: two model calls. By default a prompted reply is read for one call, so the same
question takes three.
"""

from __future__ import annotations

import asyncio
import json

from loopwright import AgentExecutor, AgentOptions, tool
from loopwright.testing import ScriptedModel


@tool(effect="read")
def weather(city: str) -> str:
    """The weather in a city."""
    return {"Oslo": "4 C, rain", "Rome": "18 C, sun"}.get(city, "unknown")


def call(city: str) -> str:
    return json.dumps(
        {"thought": city, "action": "weather", "action_input": {"city": city}, "is_final": False}
    )


ANSWER = json.dumps({"thought": "both", "final_answer": "Oslo: 4 C, rain; Rome: 18 C, sun"})
QUESTION = "What is the weather in Oslo and in Rome?"


async def main() -> None:
    model = ScriptedModel([call("Oslo") + "\n" + call("Rome"), ANSWER])
    options = AgentOptions(max_calls_per_reply=4)
    result = await AgentExecutor(model, [weather], options=options).run(QUESTION)
    calls = [f"{s.tool_name}({s.arguments['city']})" for s in result.steps]
    print(f"max_calls_per_reply=4: {calls} in {len(model.requests)} model calls")

    model = ScriptedModel([call("Oslo") + "\n" + call("Rome"), call("Rome"), ANSWER])
    plain = await AgentExecutor(model, [weather]).run(QUESTION)
    calls = [f"{s.tool_name}({s.arguments['city']})" for s in plain.steps]
    print(f"default:               {calls} in {len(model.requests)} model calls")


if __name__ == "__main__":
    asyncio.run(main())
