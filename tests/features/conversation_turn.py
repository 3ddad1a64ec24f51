"""One turn of a conversation in a process of its own (the restart test runs it twice
against one SQLite store):

    python conversation_turn.py STORE WORKSPACE REQUEST REPLIES_JSON [AFTER_RUN_ID]

prints one JSON line: the turn's run id, its answer, and the requests its model got."""

from __future__ import annotations

import asyncio
import json
import sys

from conversation_tools import convert

from loopwright import AgentExecutor
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel


async def main(store: str, workspace: str, request: str, replies: str, after: str | None) -> None:
    model = ScriptedModel(json.loads(replies))
    runtime = Runtime(SqliteRunStore(store))
    try:
        chat = runtime.conversation(
            AgentExecutor(model, [convert], workspace=workspace), after=after
        )
        result = await chat.send(request)
    finally:
        runtime.close()
    requests = [[m.to_dict() for m in r.messages] for r in model.requests]
    print(json.dumps({"run_id": result.run_id, "answer": result.answer, "requests": requests}))


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(main(args[0], args[1], args[2], args[3], args[4] if len(args) > 4 else None))
