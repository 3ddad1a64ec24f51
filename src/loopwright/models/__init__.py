"""Model adapters behind one protocol, and the spec resolver (`scripted:FILE`, ...)."""

from loopwright.models._anthropic import AnthropicModel
from loopwright.models._base import (
    ChecksUse,
    Model,
    ResumesScript,
    StreamsText,
    TextSink,
    ToolMode,
    implements,
)
from loopwright.models._http import RetryPolicy
from loopwright.models._ollama import OllamaModel
from loopwright.models._openai import OpenAIModel
from loopwright.models._resolve import ModelFactory, ModelRegistry, resolve_model
from loopwright.models._scripted import ScriptedModel, response_from_item

__all__ = [
    "AnthropicModel",
    "ChecksUse",
    "Model",
    "ModelFactory",
    "ModelRegistry",
    "OllamaModel",
    "OpenAIModel",
    "ResumesScript",
    "RetryPolicy",
    "ScriptedModel",
    "StreamsText",
    "TextSink",
    "ToolMode",
    "implements",
    "resolve_model",
    "response_from_item",
]
