"""loopwright: run LLM agents and deterministic tasks, and watch every tool call."""

from loopwright.agent import (
    AgentExecutor,
    AgentOptions,
    CompletedStep,
    ExecutionResult,
    VerificationResult,
)
from loopwright.clock import MockClock, SystemClock
from loopwright.errors import (
    ConfigurationError,
    LoopwrightError,
    MaxStepsExceeded,
    ModelRetry,
    RunError,
    TaskParseError,
    ToolError,
    UsageError,
)
from loopwright.events import SCHEMA_VERSION, Event
from loopwright.messages import Message, ModelRequest, ModelResponse, ToolCall, ToolResult, Usage
from loopwright.models import Model, ScriptedModel, resolve_model
from loopwright.prompts import PromptBuilder
from loopwright.tools import Tool, ToolContext, ToolExecutor, ToolRegistry, tool

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
    "AgentExecutor",
    "AgentOptions",
    "CompletedStep",
    "ConfigurationError",
    "Event",
    "ExecutionResult",
    "LoopwrightError",
    "MaxStepsExceeded",
    "Message",
    "MockClock",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelRetry",
    "PromptBuilder",
    "RunError",
    "ScriptedModel",
    "SystemClock",
    "TaskParseError",
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
    "resolve_model",
    "tool",
]
