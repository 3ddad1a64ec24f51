"""Tools that record their calls instead of doing anything: what the revision tests ask of
a run (which tool was called, with what), with no effect to check."""

from __future__ import annotations

from typing import Any

from loopwright.tools import Tool

CALLED: list[tuple[str, dict[str, Any]]] = []
"""Every call of a recording tool, in order (cleared by each test module's fixture)."""


def a_tool(name: str, properties: dict[str, Any]) -> Tool:
    """A tool named `name` taking `properties` that records each call in CALLED."""

    def run(**arguments: Any) -> str:
        CALLED.append((name, arguments))
        return f"{name} ok"

    return Tool(
        name=name,
        description=f"{name} something",
        parameters={"type": "object", "properties": properties},
        function=run,
    )
