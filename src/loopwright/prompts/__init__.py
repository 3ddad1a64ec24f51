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
    workspace_example,
)
from loopwright.prompts._revisions import (
    PromptedTexts,
    failure_text,
    prompted_texts,
    unknown_tool_text,
)
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
    "TEMPLATE_FIELDS",
    "FileRef",
    "PromptBuilder",
    "PromptParts",
    "PromptedTexts",
    "build_error_observation",
    "check_template",
    "correction_message",
    "failure_text",
    "iteration_note",
    "observation_text",
    "progress_note",
    "prompted_texts",
    "recap_line",
    "summarize",
    "template_fields",
    "token_rule",
    "tool_summary",
    "unknown_tool_text",
    "without_iteration",
    "workspace_example",
]
