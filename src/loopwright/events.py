"""Events: the public contract of the run log, the CLI's `--json`, the WebSocket and the store.

Every event is a small frozen dataclass with a `type` literal. They share `run_id`, `seq`
(monotonic within a run, no gaps) and `ts` (seconds since the epoch). One union, `Event`,
and one JSON codec (`event_to_dict` / `event_from_dict`, `encode_event` / `decode_event`).
The wire format carries `v`, the schema version; tests/fixtures/events_v{N}.jsonl hold a
frozen sample of each version, and every older version is still read.

Names follow the seeds where a seed named a wire type: the task runner's `task_start`,
`step_start`, `function_result`, `stream`, `confirmation_required`, `step_complete`,
`task_complete`, and the agent loop's `tool_call` (finished tool call, with `tool_name`,
`args_summary`, `result_summary` and `iteration_number`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from loopwright._frozen import quick_init

SCHEMA_VERSION = 3
"""v2: `run_started` carries the typed RunSpec (`spec`). v3: sub-agents
(`run_started.parent_call_id`, `tool_call_started.child_run_id`), approvals
(`gate_decision.reason`), structured output (`output_invalid`). v1 and v2 events are
still read."""

RunStatus = Literal["completed", "stopped", "failed", "cancelled", "interrupted", "rolled_back"]


@dataclass(frozen=True, kw_only=True, slots=True)
class BaseEvent:
    """Fields every event carries."""

    run_id: str
    seq: int
    ts: float


# --- agent runs ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class RunStarted(BaseEvent):
    """A run began. Holds what is needed to resume it (never API keys)."""

    type: Literal["run_started"] = "run_started"
    kind: Literal["agent", "task"] = "agent"
    request: str = ""
    model: str = ""
    tools: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    tenant: str = "default"
    parent_run_id: str | None = None
    spec: dict[str, Any] | None = None
    parent_call_id: str | None = None
    """A sub-agent's run: the parent's tool call that started it."""
    """The RunSpec the run was built from (what resume needs), if it was built from one."""


@dataclass(frozen=True, kw_only=True, slots=True)
class IterationStarted(BaseEvent):
    type: Literal["iteration_started"] = "iteration_started"
    iteration: int = 0
    max_iterations: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelResponded(BaseEvent):
    """A model call returned. `response` is the full provider-neutral reply (for replay)."""

    type: Literal["model_response"] = "model_response"
    iteration: int = 0
    response: dict[str, Any] = field(default_factory=dict)
    request_digest: str = ""
    thought: str | None = None
    actions: list[dict[str, Any]] = field(default_factory=list)
    final_answer: str | None = None
    duration_ms: float = 0.0


@dataclass(frozen=True, kw_only=True, slots=True)
class ParseFailed(BaseEvent):
    """The reply could not be read; a corrective message goes back if `will_retry`."""

    type: Literal["parse_error"] = "parse_error"
    iteration: int = 0
    message: str = ""
    raw: str = ""
    will_retry: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallStarted(BaseEvent):
    type: Literal["tool_call_started"] = "tool_call_started"
    iteration: int = 0
    call_id: str = ""
    tool_name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    child_run_id: str | None = None
    """A sub-agent tool's call: the id of the run it starts (nested under this call)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallFinished(BaseEvent):
    """A tool call finished (seed 003's `tool_call`). `result` is the scrubbed observation."""

    type: Literal["tool_call"] = "tool_call"
    iteration_number: int = 0
    call_id: str = ""
    tool_name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    args_summary: str = ""
    result: str = ""
    result_summary: str = ""
    is_error: bool = False
    duration_ms: float = 0.0
    truncated: bool = False
    redactions: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class RunStopped(BaseEvent):
    """A stop policy ended the run. `reason` is machine-readable, `message` for people."""

    type: Literal["run_stopped"] = "run_stopped"
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class RunErrored(BaseEvent):
    type: Literal["run_error"] = "run_error"
    error_type: str = ""
    message: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Warning(BaseEvent):
    type: Literal["warning"] = "warning"
    message: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class VerificationFinished(BaseEvent):
    type: Literal["verification"] = "verification"
    outcome: Literal["pass", "partial_pass", "fail"] = "fail"
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    output: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class RunFinished(BaseEvent):
    """The run ended. `partial` holds the work kept when it was stopped."""

    type: Literal["run_finished"] = "run_finished"
    status: RunStatus = "completed"
    answer: str | None = None
    reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    cost: float = 0.0
    steps: int = 0
    partial: dict[str, Any] | None = None


# --- task runs (seed 004's streaming contract) ---------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskStart(BaseEvent):
    type: Literal["task_start"] = "task_start"
    task_name: str = ""
    total_steps: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class StepStart(BaseEvent):
    type: Literal["step_start"] = "step_start"
    step: str = ""
    step_index: int = 0
    step_type: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class FunctionResult(BaseEvent):
    type: Literal["function_result"] = "function_result"
    step: str = ""
    function: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    success: bool = True
    error: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamChunk(BaseEvent):
    type: Literal["stream"] = "stream"
    step: str = ""
    chunk: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfirmationRequired(BaseEvent):
    type: Literal["confirmation_required"] = "confirmation_required"
    step: str = ""
    request_id: str = ""
    message: str = ""
    timeout_s: float = 300.0


@dataclass(frozen=True, kw_only=True, slots=True)
class GateDecided(BaseEvent):
    type: Literal["gate_decision"] = "gate_decision"
    step: str = ""
    request_id: str = ""
    approved: bool = False
    decided_by: str = ""
    reason: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class StepComplete(BaseEvent):
    type: Literal["step_complete"] = "step_complete"
    step: str = ""
    status: Literal["completed", "failed", "skipped", "rejected", "timed_out"] = "completed"
    result: Any = None
    error: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ChangeRecorded(BaseEvent):
    """Before a write, a backup was taken (seed 004's ChangeEntry); rollback walks these."""

    type: Literal["change_recorded"] = "change_recorded"
    step: str = ""
    action: str = ""
    resource_type: str = ""
    resource_id: str = ""
    backup_path: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskComplete(BaseEvent):
    type: Literal["task_complete"] = "task_complete"
    task_name: str = ""
    status: str = ""
    summary: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class OutputInvalid(BaseEvent):
    """A final answer that did not match the run's output type."""

    type: Literal["output_invalid"] = "output_invalid"
    iteration: int = 0
    answer: str = ""
    errors: list[str] = field(default_factory=list)
    will_retry: bool = False


# --- live only -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelTextDelta(BaseEvent):
    """Text of a model reply as it is generated (token streaming), coalesced.

    Live only: sent to a run's listeners, never stored, never replayed. `seq` is the seq
    of the event it follows (it takes no number of its own); the reply's `model_response`
    that follows holds the whole text, and tool calls are read from that, not from these.
    """

    type: Literal["model_text_delta"] = "model_text_delta"
    text: str = ""
    model: str = ""


Event = (
    RunStarted
    | IterationStarted
    | ModelResponded
    | ParseFailed
    | ToolCallStarted
    | ToolCallFinished
    | RunStopped
    | RunErrored
    | Warning
    | VerificationFinished
    | RunFinished
    | TaskStart
    | StepStart
    | FunctionResult
    | StreamChunk
    | ConfirmationRequired
    | GateDecided
    | StepComplete
    | TaskComplete
    | ChangeRecorded
    | OutputInvalid
    | ModelTextDelta
)

EVENT_TYPES: dict[str, type[Any]] = {
    str(cls.__dataclass_fields__["type"].default): cls
    for cls in (
        RunStarted, IterationStarted, ModelResponded, ParseFailed, ToolCallStarted,
        ToolCallFinished, RunStopped, RunErrored, Warning, VerificationFinished, RunFinished,
        TaskStart, StepStart, FunctionResult, StreamChunk, ConfirmationRequired, GateDecided,
        StepComplete, TaskComplete, ChangeRecorded, OutputInvalid, ModelTextDelta,
    )
}  # fmt: skip


for _cls in EVENT_TYPES.values():
    quick_init(_cls)  # several events per agent step: keep building them cheap


class EventDecodeError(ValueError):
    """A wire event that is not valid for this schema version."""

    schema_versions: ClassVar[tuple[int, ...]] = (1, 2, SCHEMA_VERSION)


def event_to_dict(event: Event) -> dict[str, Any]:
    """The wire form of an event: its fields plus `v`, the schema version."""
    data = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
    data["v"] = SCHEMA_VERSION
    return data


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from its wire form; unknown fields are an error, not ignored."""
    version = data.get("v", SCHEMA_VERSION)
    if version not in EventDecodeError.schema_versions:
        raise EventDecodeError(f"unsupported event schema version {version!r}")
    cls = EVENT_TYPES.get(str(data.get("type")))
    if cls is None:
        raise EventDecodeError(f"unknown event type {data.get('type')!r}")
    fields = {k: v for k, v in data.items() if k != "v"}
    try:
        event: Event = cls(**fields)
    except TypeError as exc:
        raise EventDecodeError(f"bad {data.get('type')} event: {exc}") from exc
    return event


def encode_event(event: Event) -> str:
    """One line of JSON."""
    return json.dumps(event_to_dict(event), ensure_ascii=False, separators=(",", ":"), default=str)


def decode_event(line: str) -> Event:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise EventDecodeError(f"event is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise EventDecodeError("event is not a JSON object")
    return event_from_dict(data)
