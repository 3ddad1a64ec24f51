"""What travels through Temporal: the names of the workflows and activities, and the
dataclass of every workflow's and activity's input and output.

Temporal's converter writes a dataclass as a JSON object of its fields and reads one back
by the type hints (unknown fields ignored, missing ones taken from their defaults), so
these are the same JSON objects the engine sent before they were typed: recorded
histories still replay. What has a codec of its own travels in it as such: a RunSpec
and a TaskSpec (`to_dict`), messages, a model's reply, tool calls and results, and
events (the event codec, with its schema version).

Names carry a version (`loopwright.model_call.v1`): an input whose shape changes gets a
new name beside the old one, so workflows recorded with the old one still replay; a new
field with a default does not change the shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from loopwright.models._base import ToolMode

AGENT_RUN = "loopwright.agent_run.v1"
TASK_RUN = "loopwright.task_run.v1"
TASK_QUEUE = "loopwright"

PREPARE = "loopwright.prepare.v1"
APPEND_EVENTS = "loopwright.append_events.v1"
MODEL_CALL = "loopwright.model_call.v1"
TOOL_CALL = "loopwright.tool_call.v1"
TOOL_OUTCOME = "loopwright.tool_outcome.v1"
VERIFY = "loopwright.verify.v1"
RECORDING = "loopwright.recording.v1"
LINEAGE = "loopwright.lineage.v1"
TASK_PREPARE = "loopwright.task_prepare.v1"
TASK_EFFECT = "loopwright.task_effect.v1"
GATE_OPEN = "loopwright.gate_open.v1"
TASK_RECORDING = "loopwright.task_recording.v1"

Events = list[dict[str, Any]]
"""Events in the event codec's form (`event_to_dict`), in the order of their `seq`."""


@dataclass(frozen=True)
class EngineSettings:
    """Timeouts and retry budgets of a run's activities (every policy is finite)."""

    heartbeat_timeout_s: float = 30.0
    model_timeout_s: float = 600.0
    tool_timeout_s: float = 600.0
    model_attempts: int = 3
    tool_attempts: int = 3
    """For idempotent tools; a tool that is not idempotent gets one attempt."""
    store_attempts: int = 10
    continue_after_calls: int = 500
    """Continue-as-new after this many model calls in one workflow run (0: only when
    Temporal suggests it), so a run's history stays small however long the run is."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineSettings:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class RunPlan:
    """What every step of a Temporal agent run is built from (small, in workflow history)."""

    run_id: str
    spec: dict[str, Any]
    model_name: str
    tool_mode: ToolMode
    workspace_section: str
    parent_run_id: str | None = None
    mcp_tools: list[dict[str, Any]] | None = None
    """The declarations of the run's MCP tools (engines/temporal/_mcp.py), if it has any."""
    tool_code: str | None = None
    """The id of the run's tool code when it started (engines/temporal/_versions.py)."""
    gate_key: str | None = None
    """The secret (hex) of the run's gate ids in this workflow (`EventLog.gate_id`), made by
    `prepare` on a worker: in the history sealed, so its replays name the same gates. None:
    a workflow recorded before gates had one (their ids have no secret part)."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunPlan:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


# -- the agent-run workflow


@dataclass(frozen=True)
class Continued:
    """A workflow run that goes on after a continue-as-new: the plan, events stored."""

    plan: RunPlan
    seq: int


@dataclass(frozen=True)
class Resumed:
    """A workflow that resumes a stored run (the workspace section it recorded)."""

    workspace_section: str | None = None


@dataclass(frozen=True)
class AgentRunInput:
    run_id: str
    spec: dict[str, Any] = field(default_factory=dict)
    """The RunSpec (a continued run's is in its plan)."""
    settings: EngineSettings = field(default_factory=EngineSettings)
    parent_run_id: str | None = None
    continued: Continued | None = None
    resume: Resumed | None = None


@dataclass(frozen=True)
class AgentRunOutcome:
    run_id: str
    status: str
    answer: Any
    reason: str | None
    steps: int
    model_calls: int


# -- the agent-run activities


@dataclass(frozen=True)
class PrepareInput:
    run_id: str
    spec: dict[str, Any]
    parent_run_id: str | None = None
    workspace_section: str | None = None


@dataclass(frozen=True)
class AppendInput:
    run_id: str
    events: Events = field(default_factory=list)


@dataclass(frozen=True)
class ModelCallInput:
    """One model call: the messages new since call `base` (its first `keep` kept)."""

    plan: RunPlan
    call: int
    base: int | None
    keep: int
    new: list[dict[str, Any]]
    temperature: float | None = None
    max_output_tokens: int | None = None
    events: Events = field(default_factory=list)
    forked: int = 0
    """A fork's first model calls, served from the old run (not made by this run's model)."""


@dataclass(frozen=True)
class ModelCallResult:
    """A model call's result: the reply in its own form (`ModelResponse.to_dict`'s fields,
    so it is the JSON object it was before it was typed: recorded histories replay), and
    the fingerprint of the whole request when what the workflow sent held stubs of stored
    texts (the stored event gets it)."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    model: str = ""
    finish_reason: str | None = None
    request_digest: str | None = None

    @classmethod
    def of(cls, reply: dict[str, Any], request_digest: str | None) -> ModelCallResult:
        """From a reply's `to_dict` form (scrubbed)."""
        return cls(**reply, request_digest=request_digest)

    def reply(self) -> dict[str, Any]:
        """The reply's `to_dict` form (for `ModelResponse.from_dict`)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        del data["request_digest"]
        return data


@dataclass(frozen=True)
class ToolCallInput:
    plan: RunPlan
    call: dict[str, Any]
    idempotent: bool
    events: Events = field(default_factory=list)


@dataclass(frozen=True)
class ToolOutcome:
    """A tool call's result and what happened: "ran", "committed" (an earlier attempt's
    result), "uncertain" (it started, its result is unknown) or "not_run"."""

    result: dict[str, Any]
    outcome: str


@dataclass(frozen=True)
class OutcomeInput:
    """After a tool call's activity failed: what became of it (and the events it carried)."""

    run_id: str
    call: dict[str, Any]
    error: str = ""
    plan: RunPlan | None = None
    events: Events = field(default_factory=list)


@dataclass(frozen=True)
class VerifyInput:
    plan: RunPlan
    events: Events = field(default_factory=list)


@dataclass(frozen=True)
class Verified:
    outcome: str
    passed: list[str]
    failed: list[str]
    output: str


@dataclass(frozen=True)
class RecordingInput:
    plan: RunPlan
    after: int
    upto: int | None = None


@dataclass(frozen=True)
class LineageInput:
    """A follow-up's or a fork's plan: what it takes from earlier runs is read from the store."""

    plan: RunPlan


@dataclass(frozen=True)
class RecordingPage:
    events: Events
    last: int
    more: bool


# -- the task-run workflow and its activities


@dataclass(frozen=True)
class TaskRunInput:
    run_id: str
    spec: dict[str, Any]
    settings: EngineSettings = field(default_factory=EngineSettings)
    resume: bool = False


@dataclass(frozen=True)
class TaskRunOutcome:
    run_id: str
    status: str
    steps: int
    failed_step: str | None


@dataclass(frozen=True)
class TaskPrepareInput:
    run_id: str
    spec: dict[str, Any]


@dataclass(frozen=True)
class TaskPrepared:
    model_name: str | None
    tool_mode: ToolMode | None
    tool_code: str | None = None
    gate_key: str | None = None
    """As `RunPlan.gate_key`, for the task run's gates."""


def gate_key_of(hex_key: str | None) -> bytes:
    """The gate key a workflow's log gets: the recorded one, or none (b"": ids without a
    secret part, as the workflow made them when it was recorded)."""
    return bytes.fromhex(hex_key) if hex_key else b""


@dataclass(frozen=True)
class TaskEffectInput:
    """One effect of a task step: `invocation` says how a worker rebuilds it."""

    run_id: str
    spec: dict[str, Any]
    call: dict[str, Any]
    idempotent: bool
    invocation: dict[str, Any]
    events: Events = field(default_factory=list)
    tool_code: str | None = None


@dataclass(frozen=True)
class GateOpenInput:
    run_id: str
    timeout_s: float
    events: Events = field(default_factory=list)


@dataclass(frozen=True)
class TaskRecordingInput:
    run_id: str
    after: int


@dataclass(frozen=True)
class TaskRecordingPage:
    events: Events
    more: bool
