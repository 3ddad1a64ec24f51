"""Does a skill fit the model? Its prompt estimated in tokens, checked before the run.

A skill's instructions go into the system prompt whole. One longer than the model's
context window fails at the first model call with the provider's words ("Requested tokens
(19407) exceed context window of 8192"); said before the run, the user learns which skill,
how big, and what to do.
"""

from __future__ import annotations

import dataclasses

from loopwright.errors import SkillError
from loopwright.messages import CHARS_PER_TOKEN, ToolSpec
from loopwright.prompts import PromptBuilder, PromptParts
from loopwright.skills._own_read import READ_TOOL
from loopwright.skills._skill import SKILL_FILE, Skill

READ_SPEC = ToolSpec(READ_TOOL, "", {})
"""A stand-in for the tools: the files section is counted (it is listed when `read` is)."""

ROOM_TOKENS = 1024
"""Tokens kept for what the estimate leaves out: the tool descriptions, the request, the
first reply (the embedded model writes at most 512 a reply)."""


def estimate_prompt_tokens(parts: PromptParts) -> int:
    """About how many tokens the system prompt of a run with these parts has, without its
    tool descriptions (a token is about four characters of English or code)."""
    listed = dataclasses.replace(parts, tools=(READ_SPEC,), allowed_tools=None)
    return len(PromptBuilder().build(listed)) // CHARS_PER_TOKEN


def check_fits(skill: Skill, parts: PromptParts, context_window: int | None) -> None:
    """A SkillError when the skill's prompt cannot fit in `context_window` tokens (None:
    the model's window is not known, nothing is checked)."""
    if not context_window:
        return
    tokens = estimate_prompt_tokens(parts)
    if tokens + ROOM_TOKENS <= context_window:
        return
    size = len(parts.skill_content.encode("utf-8"))
    raise SkillError(
        str(skill.path / SKILL_FILE),
        f"the skill is too big for the model: its prompt is about {tokens:,} tokens "
        f"({size / 1024:,.0f} KB of instructions), and the model reads at most "
        f"{context_window:,} tokens, prompt and reply together. Use a model with a larger "
        f"context window, or shorten {SKILL_FILE}: move reference material into supporting "
        "files (the model reads them only when it needs them)",
    )
