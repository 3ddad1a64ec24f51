"""LoopState: everything an agent run has done so far, as one explicit value.

The loop (agent/_loop.py) is small functions that advance a LoopState through the run's
`Effects`; nothing of a run is kept anywhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from loopwright.agent._conversation import Transcript, estimate_tokens
from loopwright.agent._lineage import RunMemory
from loopwright.agent._result import CompletedStep, ExecutionResult, ResultStatus
from loopwright.agent._setup import RunSetup
from loopwright.guards import BasePolicy, GuardState, Nudge, Stop, StopPolicy
from loopwright.guards._policies import limit_stop, timeout_stop
from loopwright.guards._policy import PolicyHook
from loopwright.prompts._turn_notes import iteration_note, progress_note


@dataclass(slots=True)
class LoopState:
    """A run's state between effects: conversation, guard state, completed steps."""

    conversation: Transcript
    guard: GuardState
    steps: list[CompletedStep] = field(default_factory=list)
    recap: list[str] = field(default_factory=list)
    """One line per completed tool call, for the progress note of prompted mode."""
    last_thought: str | None = None
    seen_observations: set[str] = field(default_factory=set)
    model_calls: int = 0
    digest: str = ""
    """The fingerprint of the latest model request (checked on replay)."""
    output_attempts: int = 0
    """Final answers that did not match the run's output type so far."""
    memory: RunMemory | None = None
    """What the result keeps for a follow-up or a fork made from it."""

    @property
    def unknown_tool_called(self) -> bool:
        """The latest tool call that ran named a tool the run does not have (a call the
        user refused is not counted: `GuardState.unknown_tool_calls` lines up with
        `call_signatures`)."""
        calls = self.guard.unknown_tool_calls
        return bool(calls) and calls[-1]

    @classmethod
    def start(cls, setup: RunSetup, now: float, *, fingerprinted: bool) -> LoopState:
        guard = GuardState(
            max_iterations=setup.options.iteration_limit,
            model_name=setup.model.name,
            started_at=now,
            hard_limit=setup.revision.hard_limit,
        )
        lineage = setup.lineage
        if lineage.history is None:
            transcript = Transcript(setup.system_prompt, fingerprinted=fingerprinted)
        else:  # a follow-up: the turn before's transcript, as it was sent
            transcript = Transcript.following(
                lineage.history, setup.system_prompt, fingerprinted=fingerprinted
            )
        memory = RunMemory(lineage, setup.options.workspace_context or "")
        return cls(transcript, guard, memory=memory)

    def refresh(self, setup: RunSetup, now: float, *, new_observation: bool | None = None) -> None:
        """Bring the guard state up to date before the stop policies read it."""
        guard, ledger = self.guard, setup.context.ledger
        guard.now = now
        guard.usage = ledger.total_usage
        guard.cost = ledger.total_cost
        guard.next_input_tokens = self.conversation.total_tokens
        if setup.options.max_tokens_total is not None or setup.options.max_cost is not None:
            guard.next_input_tokens += estimate_tokens(self.note(setup))  # the budget's estimate
        if new_observation is not None:
            changes = len(setup.tool_executor.context.modified_files)
            guard.new_observation.append(new_observation)
            guard.workspace_changed.append(changes > guard.workspace_changes)
            guard.workspace_changes = changes

    def note(self, setup: RunSetup, *, last_turn: bool = False) -> str:
        """What the next request adds to its newest message: the iteration, and in prompted
        mode the task and the latest results restated (small models need them)."""
        guard = self.guard
        if setup.tool_mode != "prompted":
            return iteration_note(guard.iteration, guard.max_iterations)
        texts = setup.revision.texts
        hint = texts.next_step_hint
        if self.unknown_tool_called and texts.unknown_tool_hint:
            hint = texts.unknown_tool_hint
        return progress_note(
            guard.iteration,
            guard.max_iterations,
            setup.request,
            self.recap,
            last_turn=last_turn and guard.hard_limit,  # revision 1 kept the usual hint
            next_step_hint=hint,
        )

    def result(
        self, setup: RunSetup, status: ResultStatus, **fields: str | None
    ) -> ExecutionResult:
        if self.memory is not None:
            self.memory.transcript = self.conversation
        return ExecutionResult(
            run_id=setup.run_id,
            status=status,
            steps=tuple(self.steps),
            iterations=self.guard.iteration,
            usage=setup.ledger.total_usage,
            cost=setup.ledger.total_cost,
            last_thought=self.last_thought,
            modified_files=tuple(setup.tool_executor.context.modified_files),
            _memory=self.memory,
            **fields,  # type: ignore[arg-type]
        )


def effect_timeout(setup: RunSetup, guard: GuardState, per_effect: float | None) -> float | None:
    """The tighter of an effect's own limit and what is left of the run's wall clock."""
    run_limit = setup.options.timeout_s
    if not run_limit:
        return per_effect or None
    remaining = max(0.001, run_limit - (guard.now - guard.started_at))
    return min(per_effect, remaining) if per_effect else remaining


def timed_out(setup: RunSetup, elapsed: float) -> Stop:
    options = setup.options
    return timeout_stop(elapsed, options.timeout_s, options.iteration_timeout_s)


def first_stop(hooks: Sequence[PolicyHook], guard: GuardState) -> Stop | Nudge | None:
    """The first policy's Stop, else the first Nudge, else None."""
    nudge: Nudge | None = None
    for check in hooks:
        verdict = check(guard)
        if verdict is None:
            continue
        if isinstance(verdict, Stop):
            return verdict
        if isinstance(verdict, Nudge) and nudge is None:
            nudge = verdict
    return nudge


def extra_call_stop(setup: RunSetup, state: LoopState, now: float) -> Stop | None:
    """Whether a model call beyond the round's own (a correction, the last turn) may be
    made: every before-call policy applies (budget, wall clock, your own), none masked by
    the iteration limit answering first; then the limit on model calls, which is hard."""
    state.refresh(setup, now)
    for check in setup.before_model_call:
        verdict = check(state.guard)
        if isinstance(verdict, Stop) and verdict.reason != "max_iterations":
            return verdict
    guard = state.guard
    if guard.hard_limit and guard.model_calls >= guard.max_iterations:
        return limit_stop(guard)
    return None


def having(policies: Sequence[StopPolicy], hook: str) -> tuple[PolicyHook, ...]:
    """The policies' `hook` methods, bound, for those that implement it (BasePolicy's
    default does nothing)."""
    default = getattr(BasePolicy, hook)
    return tuple(getattr(p, hook) for p in policies if getattr(type(p), hook, None) is not default)
