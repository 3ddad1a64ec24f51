"""What resuming a stored run needs: is it resumable, its spec, its MCP servers' tools."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from loopwright.errors import UsageError
from loopwright.events import Event
from loopwright.runtime._spec import RunSpec, recorded_spec
from loopwright.store import RunRecord
from loopwright.store._base import FINISHED
from loopwright.tools import Tool


def check_resumable(record: RunRecord) -> None:
    if record.status in FINISHED:
        follow_up = (
            f" (to carry on from a stopped run: loopwright run --continue {record.run_id})"
            if record.kind == "agent"
            else ""
        )
        raise UsageError(
            f"run {record.run_id} already ended ({record.status}); nothing to resume{follow_up}"
        )


def agent_spec(record: RunRecord, events: Sequence[Event]) -> RunSpec:
    spec = recorded_spec(events)
    if spec is None:
        raise UsageError(
            f"run {record.run_id} has no recorded RunSpec (it was not started from one): "
            "resume it from the code that builds its agent: Runtime.resume_agent(agent, run_id)"
        )
    return spec


@contextlib.asynccontextmanager
async def mcp_tools(
    servers: Sequence[str], trusted: Sequence[str] = ()
) -> AsyncIterator[list[Tool]]:
    """The MCP servers' tools, connected for the run's lifetime; the annotations of the
    `trusted` ones (the user's word, never the spec's) decide their declarations."""
    if not servers:
        yield []
        return
    from loopwright.mcp import MCPConnections

    async with MCPConnections(list(servers), trusted=trusted) as connections:
        yield list(connections.tools())
