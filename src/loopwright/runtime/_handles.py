"""A run in progress in this process, held by its engine until it ends."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any


@dataclass
class RunHandle:
    """A run in progress in this process."""

    run_id: str
    task: asyncio.Task[Any]

    async def wait(self) -> Any:
        return await self.task

    @property
    def done(self) -> bool:
        return self.task.done()

    def held_in(self, handles: dict[str, RunHandle]) -> RunHandle:
        """Be in an engine's `handles` while the run's task runs, and leave it once the
        task ends (a long-lived process keeps no finished runs in memory: the store holds
        them)."""
        handles[self.run_id] = self

        def forget(_: object) -> None:
            if handles.get(self.run_id) is self:
                del handles[self.run_id]

        self.task.add_done_callback(forget)
        return self
