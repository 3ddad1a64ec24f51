"""Tools: definition (`@tool`), registry, execution and the built-in tools; what running
them needs and other packages use too: JSON Schema validation in bounded time
(`SchemaValidator`), subprocesses with capped output (`run_process`), the threads sync
tools run in (`ToolThreads`)."""

from loopwright.tools._context import ToolContext
from loopwright.tools._deadline import run_with_timeout
from loopwright.tools._executor import ToolExecutor, render_output, truncate_output
from loopwright.tools._jsonschema import SchemaError, SchemaProblem, SchemaValidator
from loopwright.tools._process import run_process, run_process_sync
from loopwright.tools._registry import ToolRegistry
from loopwright.tools._resolve import resolve_tool, resolve_tools
from loopwright.tools._threads import DEFAULT_TOOL_THREADS, TenantToolThreads, ToolThreads
from loopwright.tools._tool import EFFECTS, Effect, Tool, tool
from loopwright.tools._workspace import resolve_in_workspace
from loopwright.tools._workspace_context import workspace_context
from loopwright.tools.builtin import BUILTIN_TOOLS, OPT_IN_TOOLS

__all__ = [
    "BUILTIN_TOOLS",
    "DEFAULT_TOOL_THREADS",
    "EFFECTS",
    "OPT_IN_TOOLS",
    "Effect",
    "SchemaError",
    "SchemaProblem",
    "SchemaValidator",
    "TenantToolThreads",
    "Tool",
    "ToolContext",
    "ToolExecutor",
    "ToolRegistry",
    "ToolThreads",
    "render_output",
    "resolve_in_workspace",
    "resolve_tool",
    "resolve_tools",
    "run_process",
    "run_process_sync",
    "run_with_timeout",
    "tool",
    "truncate_output",
    "workspace_context",
]
