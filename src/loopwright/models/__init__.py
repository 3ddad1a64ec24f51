"""Model adapters behind one protocol, and the spec resolver (`scripted:FILE`, ...).

The HTTP adapters (`AnthropicModel`, `OllamaModel`, `OpenAIModel`, `RetryPolicy`, and
`HttpClient` / `Transient` under them) and the backends' status (`backend_statuses`, for
`loopwright models`) are imported when first named: httpx costs ~50 ms of start-up that a
run on the embedded or a scripted model does not need (python -X importtime). The embedded
model's `on_assembly_progress` is defined below the models (loopwright/_assembly.py), for a
command to listen without importing them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from loopwright._moved import moved
from loopwright.models._base import Model, StreamsText, TextSink
from loopwright.models._phase import ModelPhase, on_model_phase
from loopwright.models._resolve import ModelRegistry, resolve_model

if TYPE_CHECKING:
    from loopwright.models._anthropic import AnthropicModel
    from loopwright.models._host_admin import host_statuses, stop_hosts
    from loopwright.models._http import RetryPolicy
    from loopwright.models._ollama import OllamaModel
    from loopwright.models._openai import OpenAIModel
    from loopwright.models._scripted import ScriptedModel as ScriptedModel

_LAZY = {
    "AnthropicModel": "_anthropic",
    "OllamaModel": "_ollama",
    "OpenAIModel": "_openai",
    "RetryPolicy": "_http",
    "host_statuses": "_host_admin",
    "stop_hosts": "_host_admin",
}


def __getattr__(name: str) -> Any:
    if name == "ScriptedModel":  # a test double: loopwright.testing
        return moved(__name__, name, "loopwright.testing")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AnthropicModel",
    "Model",
    "ModelPhase",
    "ModelRegistry",
    "OllamaModel",
    "OpenAIModel",
    "RetryPolicy",
    "StreamsText",
    "TextSink",
    "host_statuses",
    "on_model_phase",
    "resolve_model",
    "stop_hosts",
]
