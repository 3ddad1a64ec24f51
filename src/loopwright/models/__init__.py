"""Model adapters behind one protocol."""

from loopwright.models._base import Model, ToolMode
from loopwright.models._scripted import ScriptedModel, response_from_item

__all__ = ["Model", "ScriptedModel", "ToolMode", "response_from_item"]

from loopwright.models._resolve import register_model_factory, resolve_model

__all__ += ["register_model_factory", "resolve_model"]
