"""An MCP server (stdio) whose one tool answers with the `_meta` of its call: the trace
context loopwright sends with each MCP tool call when telemetry is on."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("trace")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def trace_context(ctx: Context[Any, Any]) -> str:
    """The trace context this call came with."""
    meta = ctx.request_context.meta or {}
    data = meta if isinstance(meta, dict) else dict(meta)
    return json.dumps({k: v for k, v in data.items() if k in ("traceparent", "tracestate")})


if __name__ == "__main__":
    server.run()
