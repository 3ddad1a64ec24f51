"""The prompted-mode texts of each revision of the system prompt.

A run's requests are fingerprinted with its system prompt, so a run recorded with an older
revision replays and resumes only with that revision's texts, byte for byte: revision 1
(RunSpec 1 to 3, prompts/_revision1.py), 2 (RunSpec 4, prompts/_revision2.py), 3 (RunSpec 5:
revision 4's texts in the layout of prompts/_revision3.py), 4 (RunSpec 6,
prompts/_templates.py) and 5 (today: the note stays in the conversation, agent/_think.py;
the example makes two calls; a progress note asks for every part of the task, and an
observation says what its tool returns) 6 (a failed call's advice follows its
error, prompts/errors.py, and after a call to a tool that does not exist the progress note
offers the listed tools or an answer, not another call; guards.UnknownTools stops a run
whose model keeps naming tools it does not have) and 7 (today: a call to a tool that does not
exist is told the closest tool's name, or else to answer in a sentence, prompts/errors.py;
guards.Repetition stops two calls made in turn with results already seen).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from loopwright.prompts import _revision1 as revision1
from loopwright.prompts import _revision2 as revision2
from loopwright.prompts import _revision3 as revision3
from loopwright.prompts import _templates as templates
from loopwright.prompts import _turn_notes as turn_notes
from loopwright.prompts.errors import (
    FailureText,
    UnknownToolText,
    build_error_observation,
    failed_call_observation,
    unknown_tool_advice,
    unknown_tool_observation,
)


@dataclass(frozen=True)
class PromptedTexts:
    """The prompted-mode texts of one revision of the prompt."""

    format: str
    answer_format: str
    """The format when no tool is offered."""
    examples: str
    answer_example: str
    workspace_example: str
    next_step_hint: str = turn_notes.NEXT_STEP_HINT
    """How a progress note ends when another call may follow."""
    observations_say_what: bool = False
    """An observation restates what its tool returns (`tool_summary`)."""
    unknown_tool_hint: str = ""
    """How a progress note ends after a call to a tool that does not exist (empty: as
    any other, `next_step_hint`)."""


_SINCE_3 = PromptedTexts(
    templates.PROMPTED_FORMAT,
    templates.PROMPTED_ANSWER_FORMAT,
    templates.PROMPTED_EXAMPLES,
    templates.PROMPTED_ANSWER_EXAMPLE,
    templates.WORKSPACE_EXAMPLE_PROMPTED,
)

_REVISION_5 = PromptedTexts(  # the notes stay; two calls in the example; results say what
    templates.PROMPTED_FORMAT,
    templates.PROMPTED_ANSWER_FORMAT,
    templates.TWO_CALL_EXAMPLES,
    templates.PROMPTED_ANSWER_EXAMPLE,
    templates.WORKSPACE_EXAMPLE_PROMPTED,
    turn_notes.EVERY_PART_HINT,
    observations_say_what=True,
)

_PROMPTED = {
    1: PromptedTexts(
        revision1.PROMPTED_FORMAT,
        revision1.PROMPTED_FORMAT,
        revision1.PROMPTED_EXAMPLES,
        "",  # revision 1 gave no example to a run without tools
        revision1.WORKSPACE_EXAMPLE_PROMPTED,
    ),
    2: PromptedTexts(
        revision2.PROMPTED_FORMAT,
        revision2.PROMPTED_FORMAT,
        templates.PROMPTED_EXAMPLES,
        templates.PROMPTED_ANSWER_EXAMPLE,
        templates.WORKSPACE_EXAMPLE_PROMPTED,
    ),
    3: _SINCE_3,
    4: _SINCE_3,  # revision 4 changed the layout only
    5: _REVISION_5,
    6: dataclasses.replace(_REVISION_5, unknown_tool_hint=turn_notes.UNKNOWN_TOOL_HINT),
    7: dataclasses.replace(_REVISION_5, unknown_tool_hint=turn_notes.NO_TOOL_FITS_HINT),
}


def prompted_texts(revision: int) -> PromptedTexts:
    """The prompted-mode texts of `revision` (1 to 7: `AgentOptions` checks it)."""
    return _PROMPTED[revision]


def failure_text(revision: int) -> FailureText:
    """How a failed tool call reads to the model in `revision`, in either tool mode."""
    return failed_call_observation if revision >= 6 else build_error_observation


def unknown_tool_text(revision: int) -> UnknownToolText:
    """How a call to a tool that does not exist reads to the model in `revision`: since
    revision 7 with the closest tool named, or else the advice to answer in a sentence."""
    return unknown_tool_advice if revision >= 7 else unknown_tool_observation


def format_section(tool_mode: str, revision: int, has_tools: bool) -> str:
    """The reply format: native, or the prompted JSON (only the answer's when no tool is
    offered, since revision 3)."""
    if tool_mode != "prompted":
        return templates.NATIVE_FORMAT
    texts = _PROMPTED[revision]
    return texts.format if has_tools else texts.answer_format


def layout(template: str, revision: int) -> str:
    """The template to fill: the builder's own, or for the default one before revision 4
    the layout those runs had (the tools before the format, prompts/_revision3.py)."""
    if revision < 4 and template == templates.SYSTEM_PROMPT_TEMPLATE:
        return revision3.SYSTEM_PROMPT_TEMPLATE
    return template


def illustration_heading(template: str, revision: int) -> str:
    """The example's heading when the run has no `read`: it points at the run's tools,
    which since revision 4 may come after the example (below) or before it (above)."""
    filled = layout(template, revision)
    tools_first = filled.find("{tool_descriptions}") < filled.find("{examples_section}")
    if revision < 4 or tools_first:
        return revision3.ILLUSTRATION_HEADING
    return templates.ILLUSTRATION_HEADING
