"""ToolRegistry: the tools a run may call, by name."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from loopwright.errors import ConfigurationError, UnknownToolError
from loopwright.messages import ToolSpec
from loopwright.tools._tool import Tool


class ToolRegistry:
    """An ordered set of tools, looked up by name."""

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.register(item)

    def register(self, item: Tool | Callable[..., Any], *, replace: bool = False) -> Tool:
        tool = item if isinstance(item, Tool) else Tool.from_function(item)
        if tool.name in self._tools and not replace:
            raise ConfigurationError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise UnknownToolError(name, list(self._tools)) from None

    def find(self, name: str) -> Tool | None:
        """The tool named `name`, or None."""
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def filtered(self, allowed: Iterable[str] | None) -> ToolRegistry:
        """A registry with only the allowed tools (all of them when `allowed` is None)."""
        if allowed is None:
            return ToolRegistry(self._tools.values())
        wanted = list(allowed)
        for name in wanted:
            self.get(name)
        return ToolRegistry(t for t in self._tools.values() if t.name in wanted)

    def specs(self) -> list[ToolSpec]:
        return [t.spec for t in self._tools.values()]
