"""Custom tools with `@tool`, next to the built-in workspace tools, in one scripted run.

    python examples/custom_tools.py

The ScriptedModel stands in for an LLM, so this runs offline and always the same way.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass
from typing import Any, Literal

from loopwright import AgentExecutor
from loopwright.testing import ScriptedModel
from loopwright.tools import BUILTIN_TOOLS, ToolContext, tool


@dataclass
class Item:
    """One line of an order."""

    name: str
    price: float
    quantity: int = 1


@tool(effect="read")
def order_total(items: list[Item], currency: Literal["EUR", "USD"] = "EUR") -> str:
    """Add up an order.

    Args:
        items: the order lines
        currency: the currency to show the total in
    """
    total = sum(item.price * item.quantity for item in items)  # items arrive as Item objects
    return f"{total:.2f} {currency}"


@tool(effect="read")
async def count_files(ctx: ToolContext, suffix: str = ".md") -> int:
    """Count the workspace files with a suffix.

    :param suffix: file name ending, e.g. ".md"
    """
    return sum(1 for path in ctx.workspace.rglob(f"*{suffix}") if path.is_file())


def step(tool_name: str, **arguments: Any) -> str:
    return json.dumps(
        {"thought": f"use {tool_name}", "action": tool_name, "action_input": arguments}
    )


SCRIPT = [
    step(
        "order_total",
        items=[{"name": "tea", "price": 3.5, "quantity": 2}, {"name": "cake", "price": 4}],
    ),
    step("write_file", path="receipt.md", content="# Receipt\nTotal: 11.00 EUR\n"),
    step("edit_file", path="receipt.md", old_text="Total:", new_text="Total due:"),
    step("count_files", suffix=".md"),
    json.dumps({"thought": "done", "final_answer": "Receipt written: 11.00 EUR"}),
]


async def main() -> None:
    with tempfile.TemporaryDirectory() as workspace:
        tools = [order_total, count_files, BUILTIN_TOOLS["write_file"], BUILTIN_TOOLS["edit_file"]]
        agent = AgentExecutor(ScriptedModel(SCRIPT), tools, workspace=workspace)
        print(json.dumps(order_total.parameters["properties"]["items"]["items"]["required"]))
        result = await agent.run("Total the order and write receipt.md")
        for done in result.steps:
            print(f"{done.tool_name}: {done.result.splitlines()[0]}")
        print("answer:", result.answer)
        print("modified:", ", ".join(result.modified_files))


if __name__ == "__main__":
    asyncio.run(main())
