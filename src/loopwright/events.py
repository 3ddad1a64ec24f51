"""Events: the public contract of the run log, the CLI's `--json`, the WebSocket and the store.

Every event is a small frozen dataclass with a `type` literal, named after it: the wire type
in CamelCase plus `Event` (`tool_call` -> `ToolCallEvent`). They share `run_id`, `seq`
(gap-free within a run) and `ts` (seconds since the epoch); every field a producer must
give has no default. One union, `Event`; one JSON codec (`event_to_dict` /
`event_from_dict`, `encode_event` / `decode_event`). The wire carries `v`, the schema
version; tests/fixtures/events_v{N}.jsonl hold a frozen sample of each version, every older
version is still read, and docs/events.schema.json is the JSON Schema of each type.

Wire names follow the seeds where a seed named them: the task runner's `task_start`,
`step_start`, `function_result`, `stream`, `confirmation_required`, `step_complete`,
`task_complete`, and the agent loop's `tool_call` (finished tool call, with `tool_name`,
`args_summary`, `result_summary` and `iteration_number`, the one name of the iteration in
every event).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Literal, get_args

import orjson

from loopwright.errors import EventDecodeError

SCHEMA_VERSION = 3
"""v2: `run_started` carries the typed RunSpec (`spec`). v3: the strict contract (class names
follow the wire types, `iteration_number` in every event, required fields), sub-agents
(`run_started.parent_call_id`, `tool_call_started.child_run_id`), `gate_decision.reason`,
`output_invalid` (structured output), `model_text_delta` (token streaming, live only).
v1 and v2 events are read."""
READABLE_VERSIONS = (1, 2, SCHEMA_VERSION)

RunStatus = Literal["completed", "stopped", "failed", "cancelled", "interrupted", "rolled_back"]


@dataclass(frozen=True, kw_only=True, slots=True)
class BaseEvent:
    """Fields every event carries."""

    run_id: str
    seq: int
    ts: float


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


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}
"""Each event class's field names (`dataclasses.fields` builds a tuple on every call)."""
_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
"""The standard library's encoder: for what orjson refuses (an integer beyond 64 bits, a
lone surrogate, nesting deeper than 254)."""
_ORJSON_OPTIONS = (
    orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)
"""Written as the standard library writes them: non-string keys as strings; dataclasses and
datetimes through `default=str`."""


def _line(data: dict[str, Any]) -> str:
    """Compact JSON, non-ASCII as is. orjson: ~0.3 µs for a tool_call event against ~3.7 with
    the standard library's encoder, four events a step (bench/cli_steps.py: 160 -> 144 µs a
    step). Where it differs, it writes what JSON means: NaN and infinities as null (not the
    standard library's invalid `NaN`), exponents without "+" (1e16), an Enum member as its
    value (not `str(member)`). Lines are read with the standard library's decoder: orjson
    reads an integer beyond 64 bits as a float."""
    try:
        return orjson.dumps(data, default=str, option=_ORJSON_OPTIONS).decode()
    except (orjson.JSONEncodeError, TypeError):
        return _LINE.encode(data)


def event_to_dict(event: Event) -> dict[str, Any]:
    """The wire form of an event: its fields plus `v`, the schema version."""
    names = _FIELD_NAMES.get(type(event))
    if names is None:
        names = _FIELD_NAMES[type(event)] = tuple(f.name for f in dataclasses.fields(event))
    data = {name: getattr(event, name) for name in names}
    data["v"] = SCHEMA_VERSION
    return data


def _upgrade(fields: dict[str, Any]) -> dict[str, Any]:
    """v1 and v2 -> v3: `iteration` became `iteration_number`."""
    if "iteration" in fields:
        fields["iteration_number"] = fields.pop("iteration")
    return fields


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from its wire form; unknown or missing fields are an error."""
    version = data.get("v", SCHEMA_VERSION)
    if version not in READABLE_VERSIONS:
        raise EventDecodeError(
            f"unsupported event schema version {version!r} (this loopwright reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}): upgrade loopwright"
        )
    cls = EVENT_TYPES.get(str(data.get("type")))
    if cls is None:
        raise EventDecodeError(f"unknown event type {data.get('type')!r}")
    fields = {k: v for k, v in data.items() if k != "v"}
    if version < SCHEMA_VERSION:
        fields = _upgrade(fields)
    try:
        event: Event = cls(**fields)
    except TypeError as exc:
        raise EventDecodeError(f"bad {data.get('type')} event: {exc}") from exc
    return event


_last_line: tuple[object, str] = (None, "")
"""The event encoded last and its line. The run store's writer encodes each event as it is
appended and the `--json` view right after, in the same thread: the view gets the writer's
line (an event is immutable; bench/cli_steps.py: ~10 µs an event)."""


def encode_event(event: Event) -> str:
    """One line of JSON (what the stores keep and `--json` prints)."""
    global _last_line
    last = _last_line
    if last[0] is event:
        return last[1]
    line = _line(event_to_dict(event))
    _last_line = (event, line)
    return line


def decode_event(line: str) -> Event:
    """An event from one line of JSON; EventDecodeError says what is wrong with it."""
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise EventDecodeError(f"event is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise EventDecodeError("event is not a JSON object")
    return event_from_dict(data)
