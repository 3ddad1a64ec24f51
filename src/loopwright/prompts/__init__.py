"""Prompt building: the system prompt, observations and correction messages."""

from loopwright.prompts._builder import (
    FileRef,
    PromptBuilder,
    PromptParts,
    correction_message,
    iteration_note,
    observation_text,
    progress_note,
    recap_line,
    summarize,
)
from loopwright.prompts.errors import build_error_observation

__all__ = [
    "FileRef",
    "PromptBuilder",
    "PromptParts",
    "build_error_observation",
    "correction_message",
    "iteration_note",
    "observation_text",
    "progress_note",
    "recap_line",
    "summarize",
]
