"""A conversation: follow-up requests in the same context, each turn a run of its own.

    python examples/conversation.py

1. In memory: `agent.run("and in EUR?", after=first)` sends the model the first turn
   (its request, tool call, observation and answer) before the new request.
2. Stored: a Runtime on a SQLite file runs the turns (`runtime.conversation(agent)`);
   a second Runtime on the same file, as after a restart, takes the conversation up from
   the last turn's run id: the history comes from the store.
3. The conversation as one thread: `runtime.turns(run_id)`.

A scripted model stands in for an LLM so the example runs anywhere; use
`resolve_model("local")` (or any model spec) for a real one.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from loopwright import AgentExecutor, tool
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel

RATES = {"GBP": 0.79, "EUR": 0.92, "JPY": 151.3}


@tool(effect="read")
def convert(amount: float, currency: str) -> str:
    """Convert US dollars to another currency.

    Args:
        amount: how many US dollars
        currency: GBP, EUR or JPY
    """
    return f"{amount * RATES[currency]:.2f} {currency}"


def turn(currency: str, answer: str) -> list[str]:
    """The scripted model's replies for one turn: a tool call, then the answer."""
    call = {"thought": "convert", "action": "convert",
            "action_input": {"amount": 12, "currency": currency}}  # fmt: skip
    return [json.dumps(call), json.dumps({"thought": "done", "final_answer": answer})]


async def in_memory() -> None:
    replies = turn("GBP", "12 USD is 9.48 GBP") + turn("EUR", "and 11.04 EUR")
    model = ScriptedModel(replies, strict=False)  # one script for both turns
    agent = AgentExecutor(model, [convert])
    first = await agent.run("What is 12 USD in GBP?")
    second = await agent.run("and in EUR?", after=first)
    print("in memory:", first.answer, "/", second.answer)
    roles = [m.role for m in model.requests[-2].messages]  # the second turn's first request
    print("  the second turn's first request:", " ".join(roles))


async def stored(path: Path) -> None:
    runtime = Runtime(SqliteRunStore(path))
    chat = runtime.conversation(AgentExecutor(ScriptedModel(turn("GBP", "9.48 GBP")), [convert]))
    first = await chat.send("What is 12 USD in GBP?")
    runtime.close()  # as if the process ended here

    later = Runtime(SqliteRunStore(path))  # a new process: only the store and a run id
    model = ScriptedModel(turn("JPY", "1815.60 JPY"))
    chat = later.conversation(AgentExecutor(model, [convert]), after=first.run_id)
    second = await chat.send("and in yen?")
    seen = "\n".join(m.content for m in model.requests[0].messages)
    print("stored:", first.answer, "/", second.answer)
    print("  the model saw the first turn again:", "9.48 GBP" in seen)
    for record in later.turns(second.run_id):
        print(f"  turn {record.run_id} after {record.after_run_id}: {record.request!r}")
    later.close()


async def main() -> None:
    await in_memory()
    with tempfile.TemporaryDirectory() as folder:
        await stored(Path(folder) / "runs.db")


if __name__ == "__main__":
    asyncio.run(main())
