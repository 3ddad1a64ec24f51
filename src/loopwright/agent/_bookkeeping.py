"""The bookkeeping of one agent run: its state, its events, its stop policies.

`AgentRun` (agent/_loop.py) is the loop; this base holds what the loop reads and writes
between effects, kept cheap because it runs several times per step.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from loopwright.agent._conversation import Conversation
from loopwright.agent._effects import RecordedEffects
from loopwright.agent._result import CompletedStep, ExecutionResult
from loopwright.agent._setup import RunSetup
from loopwright.clock import SystemClock
from loopwright.events import Event
from loopwright.guards import BasePolicy, LoopState, Nudge, Stop, StopPolicy, timeout_stop

EventSink = Callable[[Event], Awaitable[None]]


class RunBookkeeping:
    """State, events and policy checks of one run (the loop itself is AgentRun)."""

    def __init__(self, setup: RunSetup, sink: EventSink | None, recorded: RecordedEffects) -> None:
        self.setup = setup
        self.sink = sink
        self.recorded = recorded
        self.seq = 0
        self.run_id = setup.run_id
        # the clock is read several times per step: the system clock's functions directly
        system = type(setup.clock) is SystemClock
        self.timestamp: Callable[[], float] = time.time if system else setup.clock.time
        self._monotonic: Callable[[], float] = time.monotonic if system else setup.clock.monotonic
        self._replaying_until = recorded.last_seq
        self.listening = sink is not None or recorded.last_seq > 0
        """Someone reads the events (a sink, or a recording to check them against). When
        nobody does, the loop builds no events and no request fingerprint at all."""
        native = setup.tool_mode == "native"
        self._tool_specs = tuple(setup.tools.specs()) if native else ()
        self._tool_names = tuple(spec.name for spec in self._tool_specs)
        self._before_model_call = _having(setup.policies, "before_model_call")
        self._after_tool_calls = _having(setup.policies, "after_tool_calls")
        self.state = LoopState(
            max_iterations=setup.options.iteration_limit,
            model_name=setup.model.name,
            started_at=setup.clock.monotonic(),
        )
        self.conversation = Conversation(setup.system_prompt, fingerprinted=self.listening)
        self.steps: list[CompletedStep] = []
        self.recap: list[str] = []
        """One line per completed tool call, for the progress note of prompted mode."""
        self.last_thought: str | None = None
        self.seen_observations: set[str] = set()
        self.model_calls = 0
        self._digest = ""
        self._model_ms = 0.0
        self._signature = ""

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    async def emit(self, event_type: type[Any], **fields: Any) -> None:
        """Build the next event from its fields and publish it (if anyone is listening)."""
        if not self.listening:
            return
        await self.publish(
            event_type(run_id=self.run_id, seq=self.next_seq(), ts=self.timestamp(), **fields)
        )

    async def publish(self, event: Event) -> None:
        """Hand an event built with `next_seq()` to the sink (on resume: check it instead)."""
        pending = self.deliver(event)
        if pending is not None:
            await pending

    def deliver(self, event: Event) -> Awaitable[None] | None:
        """`publish` for the loop's per-step events: the sink's awaitable, or None when there
        is nothing to wait for (no sink, or a replayed event, checked here).

        The loop builds those events itself (through `emit`'s keyword arguments twice they
        cost about a microsecond more each) and awaits only what needs awaiting.
        """
        if event.seq <= self._replaying_until:
            self.recorded.check(event)
            return None
        return None if self.sink is None else self.sink(event)

    def _effect_timeout(self, per_effect: float | None) -> float | None:
        run_limit = self.setup.options.timeout_s
        if not run_limit:
            return per_effect or None
        remaining = max(0.001, run_limit - self.state.elapsed)
        return min(per_effect, remaining) if per_effect else remaining

    def _refresh_state(self, *, new_observation: bool | None = None) -> None:
        state = self.state
        state.now = self._monotonic()
        state.usage = self.setup.ledger.total_usage
        state.cost = self.setup.ledger.total_cost
        state.next_input_tokens = self.conversation.total_tokens
        if new_observation is not None:
            changes = len(self.setup.tool_executor.context.modified_files)
            state.new_observation.append(new_observation)
            state.workspace_changed.append(changes > state.workspace_changes)
            state.workspace_changes = changes

    def _timed_out(self) -> Stop:
        options = self.setup.options
        elapsed = self.setup.clock.monotonic() - self.state.started_at
        return timeout_stop(elapsed, options.timeout_s, options.iteration_timeout_s)

    def _first_stop(self, hook: str) -> Stop | Nudge | None:
        nudge: Nudge | None = None
        state = self.state
        policies = (
            self._before_model_call if hook == "before_model_call" else self._after_tool_calls
        )
        for policy in policies:
            verdict = getattr(policy, hook)(state)
            if verdict is None:
                continue
            if isinstance(verdict, Stop):
                return verdict
            if isinstance(verdict, Nudge) and nudge is None:
                nudge = verdict
        return nudge

    def _result(self, status: Any, **fields: Any) -> ExecutionResult:
        return ExecutionResult(
            run_id=self.setup.run_id,
            status=status,
            steps=tuple(self.steps),
            iterations=self.state.iteration,
            usage=self.setup.ledger.total_usage,
            cost=self.setup.ledger.total_cost,
            last_thought=self.last_thought,
            modified_files=tuple(self.setup.tool_executor.context.modified_files),
            **fields,
        )


def _having(policies: Sequence[StopPolicy], hook: str) -> tuple[StopPolicy, ...]:
    """The policies that implement `hook` (BasePolicy's default does nothing)."""
    default = getattr(BasePolicy, hook)
    return tuple(p for p in policies if getattr(type(p), hook, None) is not default)
