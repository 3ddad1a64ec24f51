"""loopwright: run LLM agents and deterministic tasks, and watch every tool call.

The public surface is what `__all__` lists: what a program builds with (runs, tools,
models, stores, events, the error bases). Everything else lives in its subpackage
(`loopwright.effects`, `loopwright.store`, `loopwright.errors`, ...); the test doubles
(`ScriptedModel`, `MockClock`, `InMemoryRunStore`) in `loopwright.testing`. Modules starting
with `_`, and names in no `__all__`, may change without notice.
"""

import importlib
from typing import TYPE_CHECKING

from loopwright._moved import moved, public_dir
from loopwright.errors import LoopwrightError, ModelRetry, RunError, ToolError, UsageError

if TYPE_CHECKING:  # imported on first use (see __getattr__), for type checkers now
    from loopwright.agent import AgentExecutor, AgentOptions, ExecutionResult
    from loopwright.events import Event, decode_event, encode_event
    from loopwright.messages import ModelRequest, ModelResponse, ToolCall, Usage
    from loopwright.models import Model, resolve_model
    from loopwright.runtime import RunSpec, Runtime, resume_run
    from loopwright.store import RunStore, SqliteRunStore, open_store
    from loopwright.tasks import TaskExecutor, TaskSpec, load_task
    from loopwright.tools import Tool, ToolContext, tool

if TYPE_CHECKING:  # the names that left the top level, for type checkers meanwhile
    from loopwright.agent import CompletedStep as CompletedStep
    from loopwright.agent import VerificationResult as VerificationResult
    from loopwright.clock import MockClock as MockClock
    from loopwright.clock import SystemClock as SystemClock
    from loopwright.effects import Effects as Effects
    from loopwright.effects import EventLog as EventLog
    from loopwright.effects import GateRequest as GateRequest
    from loopwright.effects import GateVerdict as GateVerdict
    from loopwright.errors import ConfigurationError as ConfigurationError
    from loopwright.errors import MaxStepsExceeded as MaxStepsExceeded
    from loopwright.errors import ResumeConflict as ResumeConflict
    from loopwright.errors import RunNotFound as RunNotFound
    from loopwright.errors import StoreError as StoreError
    from loopwright.errors import TaskParseError as TaskParseError
    from loopwright.events import SCHEMA_VERSION as SCHEMA_VERSION
    from loopwright.messages import Message as Message
    from loopwright.messages import MessageHistory as MessageHistory
    from loopwright.messages import ToolResult as ToolResult
    from loopwright.models import ModelRegistry as ModelRegistry
    from loopwright.prompts import PromptBuilder as PromptBuilder
    from loopwright.runtime import RunHandle as RunHandle
    from loopwright.runtime import replay_run as replay_run
    from loopwright.tasks import TaskDefinition as TaskDefinition
    from loopwright.tasks import TaskRunState as TaskRunState
    from loopwright.testing import InMemoryRunStore as InMemoryRunStore
    from loopwright.testing import ScriptedModel as ScriptedModel
    from loopwright.tools import ToolExecutor as ToolExecutor
    from loopwright.tools import ToolRegistry as ToolRegistry

__version__ = "0.1.0"

__all__ = [
    "AgentExecutor",
    "AgentOptions",
    "Event",
    "ExecutionResult",
    "LoopwrightError",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelRetry",
    "RunError",
    "RunSpec",
    "RunStore",
    "Runtime",
    "SqliteRunStore",
    "TaskExecutor",
    "TaskSpec",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "Usage",
    "UsageError",
    "decode_event",
    "encode_event",
    "load_task",
    "open_store",
    "resolve_model",
    "resume_run",
    "tool",
]

_HOMES = {
    "loopwright.testing": ("InMemoryRunStore", "MockClock", "ScriptedModel"),
    "loopwright.agent": ("CompletedStep", "VerificationResult"),
    "loopwright.clock": ("SystemClock",),
    "loopwright.effects": ("Effects", "EventLog", "GateRequest", "GateVerdict"),
    "loopwright.errors": (
        "ConfigurationError",
        "MaxStepsExceeded",
        "ResumeConflict",
        "RunNotFound",
        "StoreError",
        "TaskParseError",
    ),
    "loopwright.events": ("SCHEMA_VERSION",),
    "loopwright.messages": ("Message", "MessageHistory", "ToolResult"),
    "loopwright.models": ("ModelRegistry",),
    "loopwright.prompts": ("PromptBuilder",),
    "loopwright.runtime": ("RunHandle", "replay_run"),
    "loopwright.tasks": ("TaskDefinition", "TaskRunState"),
    "loopwright.tools": ("ToolExecutor", "ToolRegistry"),
}
MOVED = {name: home for home, names in _HOMES.items() for name in names}
"""Names that were in `__all__` in 0.1.0 -> where they live now. `loopwright.NAME` still
gives them, with a DeprecationWarning, until the next release."""


_PUBLIC_HOMES = {
    "loopwright.agent": ("AgentExecutor", "AgentOptions", "ExecutionResult"),
    "loopwright.events": ("Event", "decode_event", "encode_event"),
    "loopwright.messages": ("ModelRequest", "ModelResponse", "ToolCall", "Usage"),
    "loopwright.models": ("Model", "resolve_model"),
    "loopwright.runtime": ("RunSpec", "Runtime", "resume_run"),
    "loopwright.store": ("RunStore", "SqliteRunStore", "open_store"),
    "loopwright.tasks": ("TaskExecutor", "TaskSpec", "load_task"),
    "loopwright.tools": ("Tool", "ToolContext", "tool"),
}
_HOME_OF_PUBLIC = {name: home for home, names in _PUBLIC_HOMES.items() for name in names}
"""The public names imported on their first use: `import loopwright` (which every
`loopwright.X` import runs first) loads no agent loop, runtime, store or model code, so a
command or program that needs one part does not pay for them all."""


def __getattr__(name: str) -> object:
    home = _HOME_OF_PUBLIC.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value  # once: later lookups find it without this function
        return value
    home = MOVED.get(name)
    if home is None:
        raise AttributeError(f"module 'loopwright' has no attribute {name!r}")
    return moved("loopwright", name, home)


def __dir__() -> list[str]:
    return public_dir(globals(), __all__)
