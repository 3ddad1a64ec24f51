"""Events: the public contract of the run log, the CLI's `--json`, the WebSocket and the store.

Every event is a small frozen dataclass with a `type` literal, named after it: the wire type
in CamelCase plus `Event` (`tool_call` -> `ToolCallEvent`). They share `run_id`, `seq`
(gap-free within a run) and `ts` (seconds since the epoch), which the run's EventLog fills
in (a producer builds the event without them); every field a producer must give has no
default. One union, `Event`; one JSON codec (`event_to_dict` /
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

from loopwright.events._codec import (
    decode_event,
    encode_event,
    event_from_dict,
    event_to_dict,
)
from loopwright.events._types import (
    SCHEMA_VERSION,
    ChangeRecordedEvent,
    ConfirmationRequiredEvent,
    Event,
    FunctionResultEvent,
    GateDecisionEvent,
    IterationStartedEvent,
    ModelResponseEvent,
    ModelTextDeltaEvent,
    OutputInvalidEvent,
    ParseErrorEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    RunStoppedEvent,
    StepCompleteEvent,
    StepStartEvent,
    StreamEvent,
    TaskCompleteEvent,
    TaskStartEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
    VerificationEvent,
    WarningEvent,
)

__all__ = [
    "SCHEMA_VERSION",
    "ChangeRecordedEvent",
    "ConfirmationRequiredEvent",
    "Event",
    "FunctionResultEvent",
    "GateDecisionEvent",
    "IterationStartedEvent",
    "ModelResponseEvent",
    "ModelTextDeltaEvent",
    "OutputInvalidEvent",
    "ParseErrorEvent",
    "RunErrorEvent",
    "RunFinishedEvent",
    "RunStartedEvent",
    "RunStoppedEvent",
    "StepCompleteEvent",
    "StepStartEvent",
    "StreamEvent",
    "TaskCompleteEvent",
    "TaskStartEvent",
    "ToolCallEvent",
    "ToolCallStartedEvent",
    "VerificationEvent",
    "WarningEvent",
    "decode_event",
    "encode_event",
    "event_from_dict",
    "event_to_dict",
]
