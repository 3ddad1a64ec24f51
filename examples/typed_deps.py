"""Typed dependencies: a tool gets what the caller gives the run (here a shop's catalogue
and the customer), typed, and the answer comes back typed too.

    python examples/typed_deps.py

`AgentExecutor(..., deps_type=Shop, output_type=Quote)` is an `AgentExecutor[Shop, Quote]`:
mypy checks that `run(..., deps=...)` is given a `Shop`, a tool declaring
`ctx: ToolContext[Shop]` reads `ctx.deps` as a `Shop`, and `result.output` is a `Quote`
(None until the run completes). Each run gets its own deps; they are never recorded.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from loopwright import AgentExecutor, tool
from loopwright.testing import ScriptedModel
from loopwright.tools import ToolContext


@dataclass
class Shop:
    """What the run's tools need: given by the caller of each run."""

    customer: str
    prices: dict[str, float] = field(default_factory=dict)


@dataclass
class Quote:
    item: str
    price: float


@tool(effect="read")
def price_of(ctx: ToolContext[Shop], item: str) -> str:
    """The price of an item for this run's customer.

    Args:
        item: the item's name
    """
    shop = ctx.deps  # a Shop, for mypy and at run time
    return f"{item}: {shop.prices[item]:.2f} EUR for {shop.customer}"


def make_agent() -> AgentExecutor[Shop, Quote]:
    replies = [
        {"thought": "look it up", "action": "price_of", "action_input": {"item": "kettle"}},
        {"thought": "done", "final_answer": {"item": "kettle", "price": 24.5}},
    ]
    model = ScriptedModel([json.dumps(reply) for reply in replies])
    return AgentExecutor(model, [price_of], deps_type=Shop, output_type=Quote)


async def main() -> None:
    agent = make_agent()
    shop = Shop("Ada", {"kettle": 24.5})
    result = await agent.run("How much is the kettle?", deps=shop)
    print("tool saw:", result.steps[0].result)
    quote = result.output  # a Quote | None for mypy: None until the run completes
    assert quote is not None
    print(f"quote: {quote.item} at {quote.price:.2f}")
    try:
        await make_agent().run("How much is the kettle?", deps="Ada")  # type: ignore[arg-type]
    except TypeError as exc:
        print("wrong deps:", exc)


if __name__ == "__main__":
    asyncio.run(main())
