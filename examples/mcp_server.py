"""A small MCP server (official SDK) to try `loopwright run --mcp`.

python examples/mcp_server.py                    # stdio
python examples/mcp_server.py --http 8000        # streamable HTTP on 127.0.0.1:8000/mcp
"""

from __future__ import annotations

import argparse
import os
import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")
NOTES: list[str] = []


# Annotations tell loopwright what a tool does: a read is re-run on resume after a crash, a
# tool that is not idempotent never is, and a tool without annotations counts as unknown.
@server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False))
def add_note(text: str) -> str:
    """Store a note and return how many notes there are."""
    NOTES.append(text)
    return f"stored note {len(NOTES)}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_notes() -> list[str]:
    """Return every stored note."""
    return list(NOTES)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@server.tool()
def slow(seconds: float) -> str:
    """Sleep for a while (used to test timeouts)."""
    time.sleep(seconds)
    return "woke up"


@server.tool()
def crash() -> str:
    """Kill the server process (used to test a server that dies)."""
    os._exit(3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, help="serve streamable HTTP on this port")
    args = parser.parse_args()
    if args.http is None:
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http, streamable_http_path="/mcp")


if __name__ == "__main__":
    main()
