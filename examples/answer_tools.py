"""A tool whose result is the answer: the run ends with it, without a model call to restate it.

    python examples/answer_tools.py

A scripted model (it stands in for a local model) converts 10 euros to dollars. With
`answer_tools=("convert",)` the run completes with the tool's result as its answer after one
model call; without it, the model is asked again and restates the result in a sentence
(two model calls).
"""

from __future__ import annotations

import asyncio
import json

from loopwright import AgentExecutor, AgentOptions, tool
from loopwright.testing import ScriptedModel


@tool
def convert(amount: float, to: str) -> str:
    """Convert an amount of euros to another currency."""
    return f"{amount * 1.1:.2f} {to}"


CALL = json.dumps(
    {"thought": "convert it", "action": "convert", "action_input": {"amount": 10, "to": "USD"}}
)
RESTATED = json.dumps({"thought": "I have it", "final_answer": "10 EUR is 11.00 USD."})


async def main() -> None:
    model = ScriptedModel([CALL])
    options = AgentOptions(answer_tools=("convert",))
    result = await AgentExecutor(model, [convert], options=options).run("10 EUR in USD?")
    print(f"answer_tools:    {result.answer!r} after {len(model.requests)} model call")

    model = ScriptedModel([CALL, RESTATED])
    plain = await AgentExecutor(model, [convert]).run("10 EUR in USD?")
    print(f"without:         {plain.answer!r} after {len(model.requests)} model calls")


if __name__ == "__main__":
    asyncio.run(main())
