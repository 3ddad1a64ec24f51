"""MCP servers of Temporal runs, on the workers.

A worker opens a run's MCP servers when one of the run's activities first needs them and
keeps the sessions for the run's later activities on that worker (a stateful server sees
one session), closing them when the run ends (its run_finished is stored), when the worker
stops, or when more runs than `max_runs` have open sessions (the oldest is closed; it is
opened again if that run comes back). Each run's sessions live in a task of their own:
the MCP client's task groups must be entered and left by the same task.

The workflow never connects: `prepare` lists the servers' tools and the plan carries their
declarations (name, description, schema, effect, idempotent), from which the workflow
builds stand-ins with the same prompt; the tool activity runs the real ones.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loopwright.errors import ConfigurationError
from loopwright.tools import Tool


def declarations(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """What the workflow needs of MCP tools (small, in the plan)."""
    return [
        {
            "name": t.name,
            "description": t.description,
            "parameters": t.parameters,
            "effect": t.effect,
            "idempotent": t.idempotent,
            "timeout": t.timeout,
        }
        for t in tools
    ]


def stand_ins(declared: Sequence[dict[str, Any]]) -> list[Tool]:
    """The MCP tools as the workflow holds them: declared the same, never called there."""

    def not_here(**arguments: Any) -> str:
        raise ConfigurationError("an MCP tool runs in a tool activity on a worker, never here")

    return [
        Tool(
            name=d["name"],
            description=d["description"],
            parameters=d["parameters"],
            function=not_here,
            effect=d["effect"],
            idempotent=bool(d["idempotent"]),
            timeout=d.get("timeout"),
        )
        for d in declared
    ]


@dataclass
class _Sessions:
    """One run's open MCP connections, held by their own task."""

    ready: asyncio.Future[list[Tool]]
    done: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


class MCPSessions:
    """The MCP sessions of the runs a worker is executing."""

    def __init__(self, *, max_runs: int = 64) -> None:
        self.max_runs = max_runs
        self._runs: OrderedDict[str, _Sessions] = OrderedDict()

    def open_runs(self) -> list[str]:
        return list(self._runs)

    async def tools(self, run_id: str, servers: Sequence[str]) -> list[Tool]:
        """The run's MCP tools, its servers connected on first use."""
        found = self._runs.get(run_id)
        if found is None:
            found = _Sessions(asyncio.get_running_loop().create_future())
            found.task = asyncio.create_task(_hold(list(servers), found))
            self._runs[run_id] = found
            while len(self._runs) > self.max_runs:
                await self.close(next(iter(self._runs)))
        else:
            self._runs.move_to_end(run_id)
        try:
            return await asyncio.shield(found.ready)
        except ConfigurationError:
            await self.close(run_id)  # a server that cannot start: asked again next time
            raise

    async def close(self, run_id: str) -> None:
        found = self._runs.pop(run_id, None)
        if found is None:
            return
        found.done.set()
        if found.task is not None:
            with contextlib.suppress(Exception):
                await found.task

    async def close_all(self) -> None:
        for run_id in list(self._runs):
            await self.close(run_id)


async def _hold(servers: list[str], sessions: _Sessions) -> None:
    from loopwright.mcp import MCPConnections

    try:
        async with MCPConnections(servers) as connections:
            sessions.ready.set_result(list(connections.tools()))
            await sessions.done.wait()
    except BaseException as exc:
        if not sessions.ready.done():
            sessions.ready.set_exception(exc)
            sessions.ready.exception()  # retrieved: the caller gets it from `tools`
        if not isinstance(exc, Exception):
            raise
