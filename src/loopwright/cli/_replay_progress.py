"""`runs replay` of a long run: progress by model replies replayed out of those recorded.

The replayed loop parses every recorded model reply once, so a first parser layer that
counts and answers "not mine" measures the replay without reaching into the engine.
"""

from __future__ import annotations

from loopwright.agent import AgentExecutor
from loopwright.cli._progress import Reporter
from loopwright.errors import UsageError
from loopwright.events import ModelResponseEvent
from loopwright.messages import ModelResponse
from loopwright.models import Model
from loopwright.parsing._result import ParseOutcome
from loopwright.runtime import RunSpec
from loopwright.runtime._spec import build_agent
from loopwright.store import RunStore
from loopwright.store._base import find_run

LONG_RUN_REPLIES = 20
"""Runs with fewer recorded replies replay in a blink: no progress is shown for them."""


class _CountingLayer:
    name = "replay-progress"

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        self.reporter.advance()
        return None


class ReplayProgress:
    """A `build` factory for `replay_run` that reports each replayed reply."""

    def __init__(self, store: RunStore, run_id: str) -> None:
        try:
            events = store.events(find_run(store, run_id).run_id)
        except UsageError:  # replay_run names the problem
            events = []
        total = sum(1 for event in events if isinstance(event, ModelResponseEvent))
        self.reporter = (
            Reporter("replay", total, unit="replies") if total >= LONG_RUN_REPLIES else None
        )

    def __call__(self, spec: RunSpec, model: Model) -> AgentExecutor:
        agent = build_agent(spec, model=model)
        if self.reporter is not None:
            agent.parsers = (_CountingLayer(self.reporter), *agent.parsers)
        return agent

    def close(self) -> None:
        if self.reporter is not None:
            self.reporter.close()
