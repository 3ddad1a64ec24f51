"""Model adapters behind one protocol, and the spec resolver (`scripted:FILE`, ...)."""

from loopwright.models._base import Model, ToolMode
from loopwright.models._resolve import register_model_factory, resolve_model
from loopwright.models._scripted import ScriptedModel, response_from_item

__all__ = [
    "Model",
    "ScriptedModel",
    "ToolMode",
    "register_model_factory",
    "resolve_model",
    "response_from_item",
]
