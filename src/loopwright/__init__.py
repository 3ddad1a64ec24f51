"""loopwright: run LLM agents and deterministic tasks, and watch every tool call.

The public surface is what `__all__` lists; everything else (modules starting with `_`,
and names not listed here or in a subpackage's `__all__`) may change without notice.
"""

from loopwright.agent import (
    AgentExecutor,
    AgentOptions,
    CompletedStep,
    ExecutionResult,
    VerificationResult,
)
from loopwright.clock import MockClock, SystemClock
from loopwright.effects import Effects, EventLog, GateRequest, GateVerdict
from loopwright.errors import (
    ConfigurationError,
    LoopwrightError,
    MaxStepsExceeded,
    ModelRetry,
    ResumeConflict,
    RunError,
    RunNotFound,
    StoreError,
    TaskParseError,
    ToolError,
    UsageError,
)
from loopwright.events import SCHEMA_VERSION, Event, decode_event, encode_event
from loopwright.messages import (
    Message,
    MessageHistory,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResult,
    Usage,
)
from loopwright.models import Model, ModelRegistry, ScriptedModel, resolve_model
from loopwright.prompts import PromptBuilder
from loopwright.runtime import RunHandle, RunSpec, Runtime, replay_run, resume_run
from loopwright.store import InMemoryRunStore, RunStore, SqliteRunStore, open_store
from loopwright.tasks import TaskDefinition, TaskExecutor, TaskRunState, TaskSpec, load_task
from loopwright.tools import Tool, ToolContext, ToolExecutor, ToolRegistry, tool

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
    "AgentExecutor",
    "AgentOptions",
    "CompletedStep",
    "ConfigurationError",
    "Effects",
    "Event",
    "EventLog",
    "ExecutionResult",
    "GateRequest",
    "GateVerdict",
    "InMemoryRunStore",
    "LoopwrightError",
    "MaxStepsExceeded",
    "Message",
    "MessageHistory",
    "MockClock",
    "Model",
    "ModelRegistry",
    "ModelRequest",
    "ModelResponse",
    "ModelRetry",
    "PromptBuilder",
    "ResumeConflict",
    "RunError",
    "RunHandle",
    "RunNotFound",
    "RunSpec",
    "RunStore",
    "Runtime",
    "ScriptedModel",
    "SqliteRunStore",
    "StoreError",
    "SystemClock",
    "TaskDefinition",
    "TaskExecutor",
    "TaskParseError",
    "TaskRunState",
    "TaskSpec",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolExecutor",
    "ToolRegistry",
    "ToolResult",
    "Usage",
    "UsageError",
    "VerificationResult",
    "decode_event",
    "encode_event",
    "load_task",
    "open_store",
    "replay_run",
    "resolve_model",
    "resume_run",
    "tool",
]
