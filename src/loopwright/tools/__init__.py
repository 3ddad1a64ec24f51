"""Tools: definition (`@tool`), registry, execution, the built-in tools and the threads sync
tools run in (`ToolThreads`)."""

from loopwright.tools._context import ToolContext
from loopwright.tools._executor import ToolExecutor, render_output
from loopwright.tools._registry import ToolRegistry
from loopwright.tools._resolve import resolve_tools
from loopwright.tools._threads import TenantToolThreads, ToolThreads
from loopwright.tools._tool import Tool, tool
from loopwright.tools._workspace import resolve_in_workspace
from loopwright.tools._workspace_context import workspace_context
from loopwright.tools.builtin import BUILTIN_TOOLS, OPT_IN_TOOLS

__all__ = [
    "BUILTIN_TOOLS",
    "OPT_IN_TOOLS",
    "TenantToolThreads",
    "Tool",
    "ToolContext",
    "ToolExecutor",
    "ToolRegistry",
    "ToolThreads",
    "render_output",
    "resolve_in_workspace",
    "resolve_tools",
    "tool",
    "workspace_context",
]
