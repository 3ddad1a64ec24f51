"""Tools from MCP servers (stdio and streamable HTTP), through the official `mcp` SDK."""

from loopwright.mcp._connections import MCPConnections, MCPServerSpec

__all__ = [
    "MCPConnections",
    "MCPServerSpec",
]
