"""A server message the MCP client cannot read (a `tools/list` nested 100,000 deep, bytes
that are not JSON) fails the request waiting for it at once, with one line.

The SDK hands such a message to the client's message handler as an exception and the
request it answered never completes: without this, the connection waited out its 30 s and
the SDK's log printed a traceback. `ServerFault` is that handler; `fails_on_fault` cancels
the task waiting on the server as soon as one arrives and raises `UnreadableMessage`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any


class UnreadableMessage(Exception):
    """The server sent a message that cannot be read; the text says why, in one line."""


class ServerFault:
    """The first message of a server that could not be read (the client's message handler)."""

    def __init__(self) -> None:
        self.error: Exception | None = None
        self.seen = asyncio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, Exception) and self.error is None:
            self.error = message
            self.seen.set()

    def reason(self) -> str:
        """Why the message could not be read, in one line."""
        errors = getattr(self.error, "errors", None)
        if callable(errors):  # pydantic: "Invalid JSON: recursion limit exceeded at ..."
            with contextlib.suppress(Exception):
                return str(errors()[0]["msg"])[:200]
        text = str(self.error).strip().splitlines()
        return text[0][:200] if text else type(self.error).__name__


@contextlib.asynccontextmanager
async def fails_on_fault(fault: ServerFault) -> AsyncIterator[None]:
    """The block is cancelled when `fault` sees an unreadable message (one that came before
    it too), and `UnreadableMessage` raised in its place."""
    task = asyncio.current_task()
    assert task is not None
    fired = False

    async def watch() -> None:
        nonlocal fired
        await fault.seen.wait()
        fired = True
        task.cancel()

    watcher = asyncio.create_task(watch())
    try:
        yield
    except asyncio.CancelledError:
        if fired and task.uncancel() == 0:
            raise UnreadableMessage(fault.reason()) from None
        raise
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    if fired and task.cancelling():  # the cancel came after the block had finished
        task.uncancel()


_REPORTED = frozenset(
    {
        "Failed to parse JSONRPC message from server",
        "Error parsing SSE message",
        "Error parsing JSON response",
    }
)


class _ReportedHere(logging.Filter):
    """Leaves out the SDK's traceback for a message it could not read: the request that
    waited for it fails with `UnreadableMessage`, which says so in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg not in _REPORTED


for _name in ("mcp.client.stdio", "mcp.client.streamable_http"):
    logging.getLogger(_name).addFilter(_ReportedHere())
