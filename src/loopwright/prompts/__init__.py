"""Prompt building: the system prompt, observations and correction messages."""

from loopwright.prompts._builder import (
    TEMPLATE_FIELDS,
    FileRef,
    PromptBuilder,
    PromptParts,
    check_template,
    template_fields,
    token_rule,
    without_iteration,
)
from loopwright.prompts._revisions import REVISIONS, PromptedTexts, Revision
from loopwright.prompts._turn_notes import (
    correction_message,
    iteration_note,
    observation_text,
    progress_note,
    recap_line,
    summarize,
    tool_summary,
)
from loopwright.prompts.errors import build_error_observation

__all__ = [
    "REVISIONS",
    "TEMPLATE_FIELDS",
    "FileRef",
    "PromptBuilder",
    "PromptParts",
    "PromptedTexts",
    "Revision",
    "build_error_observation",
    "check_template",
    "correction_message",
    "iteration_note",
    "observation_text",
    "progress_note",
    "recap_line",
    "summarize",
    "template_fields",
    "token_rule",
    "tool_summary",
    "unknown_tool_text",
    "without_iteration",
]
