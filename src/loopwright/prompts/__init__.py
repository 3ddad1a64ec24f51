"""Prompt building: the system prompt, observations and correction messages."""

from loopwright.prompts._builder import PromptBuilder, PromptParts
from loopwright.prompts.errors import build_error_observation

__all__ = [
    "PromptBuilder",
    "PromptParts",
    "build_error_observation",
]
