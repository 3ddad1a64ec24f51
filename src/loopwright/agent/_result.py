"""ExecutionResult: what a finished agent run hands back."""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Generic, Literal, cast

from loopwright.effects import VerificationResult
from loopwright.errors import (
    BudgetExceeded,
    MaxStepsExceeded,
    OutputValidationError,
    RunCancelled,
    RunError,
    RunTimeout,
)
from loopwright.events import Event
from loopwright.messages import Usage

if TYPE_CHECKING:
    from loopwright.agent._lineage import RunMemory

if TYPE_CHECKING:  # a default for type checkers (PEP 696); Python 3.11's TypeVar has none
    from typing_extensions import TypeVar

    OutputT = TypeVar("OutputT", default=Any)
else:
    from typing import TypeVar

    OutputT = TypeVar("OutputT")

ResultStatus = Literal[
    "completed", "stopped", "failed", "cancelled", "interrupted", "rolled_back", "waiting"
]
"""A run's status as its result says (a finished run's is its `run_finished` status);
`waiting`: it stopped at a tool call nobody has decided yet (`on_pending="wait"`)."""


@dataclass(frozen=True, slots=True)
class CompletedStep:
    """One tool call that ran to completion (successfully or with an error observation)."""

    iteration: int
    tool_name: str
    arguments: dict[str, Any]
    result: str
    is_error: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "tool_name": self.tool_name,
            "arguments": self.arguments,
            "result": self.result,
            "is_error": self.is_error,
        }


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """A tool call a run stopped at (`on_pending="wait"`), waiting for a decision."""

    gate_id: str
    """What a decision names: `agent.resume(result, approve=[gate_id])`,
    `runtime.approve(run_id, gate_id, ...)`, `loopwright runs approve RUN_ID GATE_ID`."""
    run_id: str
    """The run the gate is in: the run's own, or a sub-agent's run for a sub-agent's call."""
    tool_name: str
    arguments: dict[str, Any]
    """The call's arguments, scrubbed as the run's events are."""
    why: str
    """Why the call needs approval (which part of the `approve=` policy asks for it)."""
    call_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "gate_id": self.gate_id,
            "run_id": self.run_id,
            "tool_name": self.tool_name,
            "arguments": self.arguments,
            "why": self.why,
            "call_id": self.call_id,
        }


T = TypeVar("T")

_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 200


@dataclass(frozen=True, repr=False, slots=True)
class ExecutionResult(Generic[OutputT]):
    """The outcome of a run: status, answer, the work done, and why it stopped.

    Generic in the type of `output`: the result of an `AgentExecutor(...,
    output_type=City)` run is an `ExecutionResult[City]`."""

    run_id: str
    status: ResultStatus
    answer: str | None = None
    reason: str | None = None
    message: str | None = None
    steps: tuple[CompletedStep, ...] = ()
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    last_thought: str | None = None
    modified_files: tuple[str, ...] = ()
    verification: VerificationResult | None = None
    output: OutputT | None = None
    """With an output type: the validated value (an instance of it; a dict for a TypedDict
    or a JSON Schema); None when the run did not complete. `answer` holds its JSON."""
    output_errors: tuple[str, ...] = ()
    """Why the last answer did not validate (a run failed with reason `output_invalid`)."""
    pending_approvals: tuple[PendingApproval, ...] = ()
    """A `waiting` run: the tool calls it stopped at, each waiting for a decision."""
    events: tuple[Event, ...] = ()
    """A `waiting` run of `agent.run` (no Runtime): its events and its sub-agents', what
    `agent.resume(result, ...)` goes on from. Empty otherwise."""
    _memory: RunMemory | None = field(default=None, repr=False, compare=False)
    """In the process that ran it: what a follow-up (`after=`) or a fork (`fork_of=`) made
    from this result takes from it. None for a result read back from the store."""

    def __repr__(self) -> str:
        """Short at any length: the steps (each holds a whole tool output) as their count,
        long values cut. `asyncio.run` builds this twice for the result of its main task
        (restoring the SIGINT handler reprs the task, CPython 3.11), so a CLI run paid
        for the repr of every step and its output at its end (a 1,000-step run: 4 ms of
        its 314 under the profiler)."""
        shown = [
            f"{f.name}=<{len(getattr(self, f.name))} {f.name}>"
            if f.name in ("steps", "events")
            else f"{f.name}={_SHORT.repr(getattr(self, f.name))}"
            for f in fields(self)
            if f.repr
        ]
        return f"ExecutionResult({', '.join(shown)})"

    def output_as(self, output_type: type[T]) -> T:
        """`output`, typed for mypy: `result.output_as(Invoice)` is an `Invoice`.

        Raises the run's error when it did not complete (OutputValidationError when its
        answer never validated), TypeError when the value is not of that type.
        """
        self.raise_for_status()
        value = self.output
        origin = getattr(output_type, "__origin__", output_type)
        if isinstance(origin, type) and not _is_typeddict(origin) and not isinstance(value, origin):
            raise TypeError(f"run output is {type(value).__name__}, not {origin.__name__}")
        return cast(T, value)

    @property
    def success(self) -> bool:
        return self.status == "completed"

    def partial(self) -> dict[str, Any]:
        """The work kept when a run did not complete."""
        return {
            "steps": [s.to_dict() for s in self.steps],
            "modified_files": list(self.modified_files),
            "last_thought": self.last_thought,
        }

    def raise_for_status(self) -> ExecutionResult[OutputT]:
        """Return self when completed; otherwise raise the matching RunError (a `waiting`
        run: a RunError naming the gates it waits at)."""
        if self.success:
            return self
        text = self.message or self.reason or self.status
        if self.reason == "max_iterations":
            raise MaxStepsExceeded(self.iterations, text)
        if self.reason == "budget":
            raise BudgetExceeded(text)
        if self.reason == "output_invalid":
            raise OutputValidationError(text, self.answer, list(self.output_errors))
        if self.reason == "timeout":
            raise RunTimeout(text)
        if self.status == "cancelled":
            raise RunCancelled(text)
        raise RunError(text)


def _is_typeddict(kind: type) -> bool:
    return issubclass(kind, dict) and hasattr(kind, "__required_keys__")
