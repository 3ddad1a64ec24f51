"""An MCP server (official SDK, stdio) for the Temporal engine's MCP tests.

    python mcp_vault_server.py TOKEN_FILE PID_DIR

`read_token` returns the token kept in TOKEN_FILE on the worker's host (it never travels in
a run's spec); `add_note` keeps notes in the server process, so calls that share a session
count up. At start the server writes its pid as a file in PID_DIR (a test checks that the
run's end closes it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("vault")
NOTES: list[str] = []


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_token() -> str:
    """Read the service token."""
    return f"the vault holds {Path(sys.argv[1]).read_text().strip()}"


@server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False))
def add_note(text: str) -> str:
    """Store a note and return how many notes this session holds."""
    NOTES.append(text)
    return f"stored note {len(NOTES)}"


if __name__ == "__main__":
    (Path(sys.argv[2]) / str(os.getpid())).write_text("")
    server.run()
