"""Tools for the demo and the quick start.

Use them with `--tools examples/tools.py:add,examples/tools.py:multiply`.
"""

from __future__ import annotations

from loopwright import tool


@tool(effect="read")
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: first number
        b: second number
    """
    return a + b


@tool(effect="read")
def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: first number
        b: second number
    """
    return a * b
