"""An MCP server (stdio, JSON-RPC written by hand) whose answer nests 100,000 deep: to
`tools/list` (`python deep_server.py list`) or to a call of its tool `deep` (`... call`)."""

from __future__ import annotations

import json
import sys

WHERE = sys.argv[1] if len(sys.argv) > 1 else "list"
DEEP = '{"items": ' * 100_000 + "{}" + "}" * 100_000


def answer(ident: object, result: str) -> None:
    sys.stdout.write(f'{{"jsonrpc": "2.0", "id": {json.dumps(ident)}, "result": {result}}}\n')
    sys.stdout.flush()


def tools() -> str:
    schema = DEEP if WHERE == "list" else '{"type": "object", "properties": {}}'
    return f'{{"tools": [{{"name": "deep", "inputSchema": {schema}}}]}}'


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue  # a notification
    method = message.get("method")
    if method == "initialize":
        info = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "deep", "version": "1"},
        }
        answer(message["id"], json.dumps(info))
    elif method == "tools/list":
        answer(message["id"], tools())
    elif method == "tools/call":
        answer(message["id"], f'{{"content": [], "structuredContent": {DEEP}}}')
    else:
        answer(message["id"], "{}")
