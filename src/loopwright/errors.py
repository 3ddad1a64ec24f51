"""The one exception tree of loopwright.

Three kinds are kept apart: the caller misused the API, the run failed, and feedback
that goes back to the model instead of up the stack::

    LoopwrightError
    ├── UsageError                  the caller misused the API or gave bad input
    │   ├── ConfigurationError      bad option, unknown model spec, missing API key
    │   ├── ToolDefinitionError     a function that cannot become a tool
    │   ├── UnknownToolError        a tool name that is not registered
    │   ├── SkillError              a SKILL.md folder that is not valid
    │   │   └── SkillProblems       several problems of one skill, all found in one pass
    │   ├── TaskParseError          a task file that is not valid (file_path, message, line)
    │   │   └── TaskProblems        several problems of task files, all found in one pass
    │   ├── TaskMatchError          no task (or more than one) matches a free-text request
    │   ├── EventDecodeError        a wire event that is not valid for any readable version
    │   ├── RunNotFound             no run with that id in the store (or not yours)
    │   ├── FollowUpError           a follow-up to a run that cannot take one (still running...)
    │   ├── ForkError               a fork of a run that cannot give one (past its last step...)
    │   └── GateNotFound            a decision on a gate the run never asked
    ├── RunError                    the run itself failed
    │   ├── ModelError              a model call failed (provider, url)
    │   │   ├── ModelUnavailableError   the provider could not be reached
    │   │   └── ModelAdapterError   the model raised something else: a bug in its code
    │   ├── ScriptExhaustedError    a ScriptedModel ran out of replies, or had some left
    │   ├── MaxStepsExceeded        the iteration limit was reached
    │   ├── BudgetExceeded          the token or cost budget would be exceeded
    │   ├── RunTimeout              the wall clock ran out
    │   ├── RunCancelled            someone cancelled the run
    │   ├── OutputValidationError   the final answer never matched the output type (last answer)
    │   ├── ReplayDivergence        re-running a recorded run made a different effect
    │   ├── TaskRunError            a task step could not run (bad value, backup, undo)
    │   └── StoreError              the run store failed
    │       ├── StoreUnavailableError   it could not be reached or lost its connection
    │       └── ResumeConflict      the run is already being resumed elsewhere
    └── ModelFeedback               goes back into the conversation, never up the stack
        ├── ToolError               a tool failed; its message becomes the observation
        ├── ModelRetry              a tool asks the model to try again, with a hint
        └── ParseError              the model's reply could not be read

    RunSuspended (a BaseException, like asyncio.CancelledError: not an error) stops a run
    at a gate nobody has decided yet (`on_pending="wait"`); the loop turns it into a
    `waiting` result, and it never reaches the caller.

Exceptions never log or print when constructed.
"""

from __future__ import annotations

from typing import Any


class LoopwrightError(Exception):
    """Base of every exception raised by loopwright.

    Every one pickles with its fields (a process pool, a multiprocessing queue): it is
    rebuilt from its class, its `args` and its attributes, without calling `__init__` again
    (whose parameters differ from class to class).
    """

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args), self.__dict__)


def _rebuild(cls: type[LoopwrightError], args: tuple[Any, ...]) -> LoopwrightError:
    """An exception of `cls` with `args`, its attributes still to come (pickle's state)."""
    return cls.__new__(cls, *args)


class UsageError(LoopwrightError):
    """The caller misused the API or gave bad input."""


class ConfigurationError(UsageError):
    """A bad option, an unknown model spec, a missing key."""


class ToolDefinitionError(UsageError):
    """A Python function that cannot be turned into a tool."""


class UnknownToolError(UsageError):
    """A tool name that is not in the registry."""

    def __init__(self, name: str, known: list[str] | None = None) -> None:
        self.name = name
        self.known = sorted(known or [])
        hint = f" (known tools: {', '.join(self.known)})" if self.known else ""
        super().__init__(f"unknown tool {name!r}{hint}")


class SkillError(UsageError):
    """A skill folder that is not valid; names the file, the line (when known) and the problem."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path = path
        self.message = message
        self.line = line
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class SkillProblems(SkillError):
    """Every problem of one skill, in line order; the text lists them all, one a line."""

    def __init__(self, problems: list[SkillError]) -> None:
        if not problems:
            raise ValueError("SkillProblems needs at least one problem")
        self.problems = list(problems)
        first = self.problems[0]
        super().__init__(first.path, first.message, first.line)
        self.args = ("\n".join(str(p) for p in self.problems),)

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


class TaskParseError(UsageError):
    """A task file that is not valid; names the file, the line and the problem."""

    def __init__(self, file_path: str, message: str, line: int | None = None) -> None:
        self.file_path = file_path
        self.message = message
        self.line = line
        where = f"{file_path}:{line}" if line is not None else file_path
        super().__init__(f"{where}: {message}")


class TaskProblems(TaskParseError):
    """Every problem found in task files in one pass, in file order; the first one gives
    `file_path`, `line` and `message`, and the text lists them all, one a line."""

    def __init__(self, problems: list[TaskParseError]) -> None:
        if not problems:
            raise ValueError("TaskProblems needs at least one problem")
        self.problems = list(problems)
        first = self.problems[0]
        super().__init__(first.file_path, first.message, first.line)
        self.args = ("\n".join(str(p) for p in self.problems),)

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


class TaskMatchError(UsageError):
    """No task's trigger keywords match a request, or several match equally well."""


class EventDecodeError(UsageError, ValueError):
    """A wire event that is not valid for any schema version this loopwright reads."""


class RunNotFound(UsageError):
    """No run with that id in the store (or it belongs to another tenant)."""

    def __init__(self, run_id: str, where: str = "") -> None:
        self.run_id = run_id
        super().__init__(f"no run {run_id!r}" + (f" in {where}" if where else ""))


class GateNotFound(UsageError):
    """A decision on a gate the run never asked (one it asked and no longer waits at is a
    UsageError)."""


class FollowUpError(UsageError):
    """A follow-up turn (`after=`) that cannot start: the run it follows is still running,
    is a task run, holds no conversation, or cannot be replayed by this agent. Nothing is
    started."""


class ForkError(UsageError):
    """A fork (`fork_of=`) that cannot start: the step is past the run's last, or the run is
    not an agent run that has ended. Nothing is started."""


class RunError(LoopwrightError):
    """The run failed."""


class TaskRunError(RunError):
    """A task step could not run: a value it needs is missing, a backup or an undo failed."""


class ModelError(RunError):
    """A model call failed."""

    def __init__(self, message: str, *, provider: str = "", url: str = "") -> None:
        self.provider = provider
        self.url = url
        super().__init__(message)


class ModelUnavailableError(ModelError):
    """The model provider could not be reached."""


class ModelAdapterError(ModelError):
    """The model raised an exception that is not a loopwright error: a bug in its adapter or
    in your own `Model` class. The run ends `failed` with it (never raised out of the run);
    `error_type` names the class it raised, and the original is the `__cause__`."""

    def __init__(self, message: str, *, error_type: str, provider: str = "") -> None:
        self.error_type = error_type
        super().__init__(message, provider=provider)


class ScriptExhaustedError(RunError):
    """A ScriptedModel was asked for more replies than it has, or has replies left."""


class MaxStepsExceeded(RunError):
    """The run reached its iteration limit without a final answer."""

    def __init__(self, max_steps: int, message: str | None = None) -> None:
        self.max_steps = max_steps
        super().__init__(message or f"no final answer after {max_steps} steps")


class BudgetExceeded(RunError):
    """The next model call would exceed the token or cost budget."""


class RunTimeout(RunError):
    """The run's wall-clock limit was reached."""


class RunCancelled(RunError):
    """The run was cancelled."""


class OutputValidationError(RunError):
    """The model's final answer did not match the run's output type, after every retry.

    `answer` is the last answer the model gave; `errors` what was wrong with it.
    """

    def __init__(self, message: str, answer: str | None = None, errors: list[str] | None = None):
        super().__init__(message)
        self.answer = answer
        self.errors = list(errors or [])


class StoreError(RunError):
    """The run store failed."""


class StoreUnavailableError(StoreError):
    """The run store could not be reached or lost its connection: trying again later can
    succeed (nothing was half-written)."""


class ResumeConflict(StoreError):
    """The run is held by another live process."""


class ModelFeedback(LoopwrightError):
    """Feedback that goes back into the conversation for the model, not up the stack."""


class ToolError(ModelFeedback):
    """Raised by a tool to fail with a message the model will read."""


class ModelRetry(ModelFeedback):
    """Raised by a tool to ask the model to try again, with a hint."""


class ParseError(ModelFeedback):
    """The model's reply could not be read as an action or a final answer."""


class ReplayDivergence(RunError):
    """Re-running a recorded run produced a different effect than the one recorded."""

    def __init__(self, seq: int, expected: str, actual: str) -> None:
        self.seq = seq
        self.expected = expected
        self.actual = actual
        super().__init__(f"diverged at event {seq}: recorded {expected}, now {actual}")


class RunSuspended(BaseException):
    """A tool call needs a decision nobody has given yet, and the run is to end `waiting`
    rather than wait (`on_pending="wait"`). Raised by the run's gatekeeper at the gate,
    given the pending approval by the tool phase, and turned into the run's `waiting`
    result by the loop (a sub-agent's goes up to its lead's loop, through the tool call
    that runs it). A BaseException so that nothing on the way, such as the tool
    executor's `except Exception`, takes it for a tool's failure."""

    def __init__(self, gate_id: str, pending: tuple[Any, ...] = ()) -> None:
        self.gate_id = gate_id
        self.pending = pending
        """The pending approvals (agent.PendingApproval) the run stopped at."""
        super().__init__(f"waiting for a decision on gate {gate_id}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_signal, (type(self), self.args), self.__dict__)


def _rebuild_signal(cls: type[RunSuspended], args: tuple[Any, ...]) -> RunSuspended:
    """A RunSuspended with `args`, its attributes still to come (pickle's state)."""
    return cls.__new__(cls, *args)
