"""A small MCP server (official SDK) to try `loopwright run --mcp`.

python examples/mcp_server.py                    # stdio
python examples/mcp_server.py --http 8000        # streamable HTTP on 127.0.0.1:8000/mcp
"""

from __future__ import annotations

import argparse
import os
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")
NOTES: list[str] = []


@server.tool()
def add_note(text: str) -> str:
    """Store a note and return how many notes there are."""
    NOTES.append(text)
    return f"stored note {len(NOTES)}"


@server.tool()
def list_notes() -> list[str]:
    """Return every stored note."""
    return list(NOTES)


@server.tool()
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
