"""An MCP server's tool annotations count only when you trust the server.

    python examples/mcp_trust.py

The same server (examples/mcp_server.py) is connected twice: untrusted, every tool is
`unknown` and not idempotent (it waits under `approve=["unknown"]` and is never re-run on
resume); trusted, its `readOnlyHint`/`destructiveHint`/`idempotentHint` decide.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from loopwright.mcp import MCPConnections

SERVER = f"{sys.executable} {Path(__file__).with_name('mcp_server.py')}"


async def main() -> None:
    for trusted in ([], [SERVER]):
        async with MCPConnections([SERVER], trusted=trusted) as servers:
            tools = {tool.name: tool for tool in servers.tools()}
        label = "trusted" if trusted else "untrusted"
        for name in ("list_notes", "add_note"):
            print(
                f"{label}: {name} effect={tools[name].effect} idempotent={tools[name].idempotent}"
            )


if __name__ == "__main__":
    asyncio.run(main())
