"""The phase of each run's embedded model call in progress (loading the model, waiting for
it, evaluating the prompt, generating), for the run page's live line.

Live only, like token deltas: nothing is stored and it is no event (no `seq`). A follower
gets the phase in progress when it starts following, then each new one as a WebSocket
frame `{"type": "model_phase", "run_id", "ts", "phase", "text"}`. Only calls made in this
process are seen (not a Temporal worker's).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from loopwright.models import ModelPhase
from loopwright.models._phase import on_run_model_phase


class RunPhases:
    """The phase in progress per run, and the queues of those who follow each run."""

    def __init__(self) -> None:
        self.current: dict[str, dict[str, Any]] = {}
        self.followers: dict[str, set[asyncio.Queue[dict[str, Any]]]] = {}
        self.stop = on_run_model_phase(self.entered)

    def entered(self, run_id: str, phase: ModelPhase | None) -> None:
        if phase is None:  # the call ended: its reply (an event) says the rest
            self.current.pop(run_id, None)
            return
        frame = {"type": "model_phase", "run_id": run_id, "ts": time.time(),
                 "phase": phase.phase, "text": phase.text}  # fmt: skip
        self.current[run_id] = frame
        for queue in self.followers.get(run_id, ()):
            queue.put_nowait(frame)

    def follow(self, run_id: str) -> asyncio.Queue[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        if run_id in self.current:
            queue.put_nowait(self.current[run_id])
        self.followers.setdefault(run_id, set()).add(queue)
        return queue

    def leave(self, run_id: str, queue: asyncio.Queue[dict[str, Any]]) -> None:
        queues = self.followers.get(run_id, set())
        queues.discard(queue)
        if not queues:
            self.followers.pop(run_id, None)


RUN_PHASES = RunPhases()
"""One per process: run ids are unique, and the model's calls report to the process."""
