"""The tool of the conversation and fork tests (a spec loads this file as a tool file): a
conversion that leaves a line in the workspace's `conversions.log` each time it runs, so a
test sees which calls ran and which were served from a log."""

from __future__ import annotations

from pathlib import Path

from loopwright import ToolContext, tool

RATES = {"GBP": 0.8, "EUR": 0.92, "JPY": 150.0}


@tool(effect="read")
def convert(amount: float, currency: str, ctx: ToolContext) -> str:
    """Convert an amount of USD to another currency.

    Args:
        amount: how many US dollars
        currency: the currency to convert to
        ctx: the call's context
    """
    with (ctx.workspace / "conversions.log").open("a", encoding="utf-8") as log:
        log.write(f"{currency}\n")
    return f"{amount} USD = {amount * RATES[currency]:.2f} {currency}"


def conversions(workspace: Path) -> list[str]:
    """The currencies converted in `workspace` so far, in order."""
    log = workspace / "conversions.log"
    return log.read_text(encoding="utf-8").split() if log.exists() else []
