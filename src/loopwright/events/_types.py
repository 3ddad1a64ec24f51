"""The event types: one frozen dataclass per wire type, and their union `Event`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal, get_args

SCHEMA_VERSION = 5
"""v2: `run_started` carries the typed RunSpec (`spec`). v3: the strict contract (class names
follow the wire types, `iteration_number` in every event, required fields), sub-agents
(`run_started.parent_call_id`, `tool_call_started.child_run_id`), `gate_decision.reason`,
`output_invalid` (structured output), `model_text_delta` (token streaming, live only).
v4: `model_response.ended`, how the reply ended (`stop`, `length`, `action_complete`).
v5: conversations and forks (`run_started.after_run_id`, `run_started.fork_of`).
v1 to v4 events are read."""
READABLE_VERSIONS = (1, 2, 3, 4, SCHEMA_VERSION)

ReplyEnd = Literal["stop", "length", "action_complete"]
"""How a model's reply ended: the model stopped (`stop`), it reached its output limit
(`length`), or it was ended once its first action was complete (`action_complete`)."""


def reply_end(finish_reason: str | None) -> ReplyEnd:
    """`ModelResponseEvent.ended` from a reply's provider `finish_reason` (OpenAI's
    `length`, Anthropic's `max_tokens`: the limit; loopwright's `action_complete`; any other
    reason, or none given, is the model stopping)."""
    if finish_reason in ("length", "max_tokens"):
        return "length"
    if finish_reason == "action_complete":
        return "action_complete"
    return "stop"


RunStatus = Literal["completed", "stopped", "failed", "cancelled", "interrupted", "rolled_back"]


@dataclass(frozen=True, kw_only=True, slots=True)
class BaseEvent:
    """Fields every event carries. A producer leaves them out: the run's EventLog fills
    them in as it appends the event (effects/_log.py), and the wire always carries them."""

    run_id: str = ""
    seq: int = 0
    ts: float = 0.0


# --- agent runs ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class RunStartedEvent(BaseEvent):
    """A run began. Holds what is needed to resume it (never a secret)."""

    type: Literal["run_started"] = "run_started"
    kind: Literal["agent", "task"]
    request: str
    model: str
    tools: list[str]
    options: dict[str, Any]
    tenant: str
    parent_run_id: str | None = None
    spec: dict[str, Any] | None = None
    """The RunSpec (or TaskSpec) the run was built from: what resume needs."""
    parent_call_id: str | None = None
    """A sub-agent's run: the parent's tool call that started it."""
    after_run_id: str | None = None
    """A follow-up in a conversation: the run of the turn before (its history is that
    turn's conversation). Not a parent: the earlier turn had ended."""
    fork_of: dict[str, Any] | None = None
    """A fork: `{"run_id": ..., "step": N}`, the run whose first N steps (iterations) this
    one took from its log instead of making them again."""


@dataclass(frozen=True, kw_only=True, slots=True)
class IterationStartedEvent(BaseEvent):
    type: Literal["iteration_started"] = "iteration_started"
    iteration_number: int
    max_iterations: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelResponseEvent(BaseEvent):
    """A model call returned. `response` is the full provider-neutral reply (for replay)."""

    type: Literal["model_response"] = "model_response"
    iteration_number: int
    response: dict[str, Any]
    request_digest: str
    thought: str | None
    actions: list[dict[str, Any]]
    final_answer: str | None
    duration_ms: float
    ended: ReplyEnd
    """How the reply ended; `action_complete`: generation was stopped after its first
    complete action (the rest would not have been used)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ParseErrorEvent(BaseEvent):
    """The reply could not be read; a corrective message goes back if `will_retry`."""

    type: Literal["parse_error"] = "parse_error"
    iteration_number: int
    message: str
    raw: str
    will_retry: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallStartedEvent(BaseEvent):
    type: Literal["tool_call_started"] = "tool_call_started"
    iteration_number: int
    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    child_run_id: str | None = None
    """A sub-agent tool's call: the id of the run it starts (nested under this call)."""


def child_run_id(parent_run_id: str, call_id: str) -> str:
    """The id of the run that the call `call_id` of a sub-agent tool in run `parent_run_id`
    starts (`ToolCallStartedEvent.child_run_id`): the same in every process of the lead."""
    return "run_" + hashlib.sha256(f"{parent_run_id}/{call_id}".encode()).hexdigest()[:16]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallEvent(BaseEvent):
    """A tool call finished (seed 003's `tool_call`). `result` is the scrubbed observation."""

    type: Literal["tool_call"] = "tool_call"
    iteration_number: int
    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    args_summary: str
    result: str
    result_summary: str
    is_error: bool
    duration_ms: float
    truncated: bool = False
    redactions: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class RunStoppedEvent(BaseEvent):
    """A stop policy ended the run. `reason` is machine-readable, `message` for people."""

    type: Literal["run_stopped"] = "run_stopped"
    reason: str
    message: str


@dataclass(frozen=True, kw_only=True, slots=True)
class RunErrorEvent(BaseEvent):
    type: Literal["run_error"] = "run_error"
    error_type: str
    message: str


@dataclass(frozen=True, kw_only=True, slots=True)
class WarningEvent(BaseEvent):
    type: Literal["warning"] = "warning"
    message: str


@dataclass(frozen=True, kw_only=True, slots=True)
class VerificationEvent(BaseEvent):
    type: Literal["verification"] = "verification"
    outcome: Literal["pass", "partial_pass", "fail"]
    passed: list[str]
    failed: list[str]
    output: str


@dataclass(frozen=True, kw_only=True, slots=True)
class RunFinishedEvent(BaseEvent):
    """The run ended. `partial` holds the work kept when it did not complete."""

    type: Literal["run_finished"] = "run_finished"
    status: RunStatus
    answer: str | None
    reason: str | None
    usage: dict[str, int]
    cost: float
    steps: int
    partial: dict[str, Any] | None


# --- task runs (seed 004's streaming contract) ---------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskStartEvent(BaseEvent):
    type: Literal["task_start"] = "task_start"
    task_name: str
    total_steps: int


@dataclass(frozen=True, kw_only=True, slots=True)
class StepStartEvent(BaseEvent):
    type: Literal["step_start"] = "step_start"
    step: str
    step_index: int
    step_type: str


@dataclass(frozen=True, kw_only=True, slots=True)
class FunctionResultEvent(BaseEvent):
    type: Literal["function_result"] = "function_result"
    step: str
    function: str
    arguments: dict[str, Any]
    result: Any
    success: bool
    error: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamEvent(BaseEvent):
    type: Literal["stream"] = "stream"
    step: str
    chunk: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfirmationRequiredEvent(BaseEvent):
    type: Literal["confirmation_required"] = "confirmation_required"
    step: str
    request_id: str
    message: str
    timeout_s: float


@dataclass(frozen=True, kw_only=True, slots=True)
class GateDecisionEvent(BaseEvent):
    type: Literal["gate_decision"] = "gate_decision"
    step: str
    request_id: str
    approved: bool
    decided_by: str
    reason: str = ""
    """Why, when the decider said (a denial's reason goes back to the model)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class StepCompleteEvent(BaseEvent):
    type: Literal["step_complete"] = "step_complete"
    step: str
    status: Literal["completed", "failed", "skipped", "rejected", "timed_out"]
    result: Any = None
    error: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ChangeRecordedEvent(BaseEvent):
    """Before a write, a backup was taken (seed 004's ChangeEntry); rollback walks these."""

    type: Literal["change_recorded"] = "change_recorded"
    step: str
    action: str
    resource_type: str
    resource_id: str
    backup_path: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskCompleteEvent(BaseEvent):
    type: Literal["task_complete"] = "task_complete"
    task_name: str
    status: str
    summary: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class OutputInvalidEvent(BaseEvent):
    """A final answer that did not match the run's output type."""

    type: Literal["output_invalid"] = "output_invalid"
    iteration_number: int
    answer: str
    errors: list[str]
    will_retry: bool


# --- live only -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelTextDeltaEvent(BaseEvent):
    """Text of a model reply as it is generated (token streaming), coalesced.

    Live only: sent to a run's listeners, never stored, never replayed. `seq` is the seq
    of the event it follows (it takes no number of its own); the reply's `model_response`
    that follows holds the whole text, and tool calls are read from that, not from these.
    """

    type: Literal["model_text_delta"] = "model_text_delta"
    text: str
    model: str


Event = (
    RunStartedEvent
    | IterationStartedEvent
    | ModelResponseEvent
    | ParseErrorEvent
    | ToolCallStartedEvent
    | ToolCallEvent
    | RunStoppedEvent
    | RunErrorEvent
    | WarningEvent
    | VerificationEvent
    | RunFinishedEvent
    | TaskStartEvent
    | StepStartEvent
    | FunctionResultEvent
    | StreamEvent
    | ConfirmationRequiredEvent
    | GateDecisionEvent
    | StepCompleteEvent
    | ChangeRecordedEvent
    | TaskCompleteEvent
    | OutputInvalidEvent
    | ModelTextDeltaEvent
)

EVENT_CLASSES: tuple[type[Any], ...] = get_args(Event)
EVENT_TYPES: dict[str, type[Any]] = {
    str(cls.__dataclass_fields__["type"].default): cls for cls in EVENT_CLASSES
}
"""Wire type -> class, derived from the union."""
