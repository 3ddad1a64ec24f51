"""The revisions of the engine's behaviour, as one table of switches (`REVISIONS`).

A run's requests are fingerprinted with its system prompt, so a run recorded with an older
revision replays and resumes only with that revision's texts and behaviour, byte for byte.
`AgentOptions.revision` names the revision; RunSpec versions 1 to 3 read 1
(prompts/_revision1.py), 4 reads 2 (prompts/_revision2.py), 5 reads 3 (revision 4's texts
in the layout of prompts/_revision3.py), 6 reads 4 (prompts/_templates.py), 7 reads 5,
8 reads 6 and 9 and 10 (today) the latest unless the spec names one (a spec loopwright
wrote always names it). Each revision is the one before
with what it changed.
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


_TEXTS_1 = PromptedTexts(
    revision1.PROMPTED_FORMAT,
    revision1.PROMPTED_FORMAT,
    revision1.PROMPTED_EXAMPLES,
    "",  # revision 1 gave no example to a run without tools
    revision1.WORKSPACE_EXAMPLE_PROMPTED,
)
_TEXTS_2 = PromptedTexts(  # the JSON format over several lines
    revision2.PROMPTED_FORMAT,
    revision2.PROMPTED_FORMAT,
    templates.PROMPTED_EXAMPLES,
    templates.PROMPTED_ANSWER_EXAMPLE,
    templates.WORKSPACE_EXAMPLE_PROMPTED,
)
_TEXTS_3 = PromptedTexts(  # the JSON format on one line, the answer's alone without tools
    templates.PROMPTED_FORMAT,
    templates.PROMPTED_ANSWER_FORMAT,
    templates.PROMPTED_EXAMPLES,
    templates.PROMPTED_ANSWER_EXAMPLE,
    templates.WORKSPACE_EXAMPLE_PROMPTED,
)
_TEXTS_5 = PromptedTexts(  # two calls in the example; results say what their tool returns
    templates.PROMPTED_FORMAT,
    templates.PROMPTED_ANSWER_FORMAT,
    templates.TWO_CALL_EXAMPLES,
    templates.PROMPTED_ANSWER_EXAMPLE,
    templates.WORKSPACE_EXAMPLE_PROMPTED,
    turn_notes.EVERY_PART_HINT,
    observations_say_what=True,
)


@dataclass(frozen=True)
class Revision:
    """What one revision of the engine's behaviour does: the texts and switches the system
    prompt, the loop, the default wall clock and skill runs read. A run looks its revision
    up once (`revision_of(AgentOptions.revision)`, kept as `RunSetup.revision`)."""

    number: int
    texts: PromptedTexts
    """The prompted-mode texts."""
    native_workspace_example: str
    """The file-work example in native mode."""
    hard_limit: bool
    """The iteration limit's last call is offered without tools, for the final answer
    (revision 1 stopped the run at the limit)."""
    is_final: bool
    """A prompted reply's schema (the reply grammar) has `is_final`."""
    wall_clock_any_tool: bool
    """Any tool makes a run agentic for the default wall clock (revision 1: only a tool
    that may change things)."""
    skill_own_read: bool
    """A skill run gets a `read` of its own folder."""
    token_rule: bool
    """The system prompt has seed 002's token-limit rule."""
    example_fits_tools: bool
    """The example fits the run's tools (an answer's without tools, a heading that says
    `read` is an illustration without it) and the supporting files are listed only with
    `read` (revision 1: the read example, prompted mode only, and the files always)."""
    tools_as_signatures: bool
    """Prompted mode with the default template lists the tools as signatures."""
    shared_parts_first: bool
    """The default template puts the shared parts first (intro, format, rules, example)
    and the run's own last; before, the run's tools came before the format
    (prompts/_revision3.py)."""
    notes_stay: bool
    """Each request's note stays in the conversation."""
    stops_unknown_tools: bool
    """`repetition_threshold` calls in a row to tools the run does not have stop it."""
    failure_text: FailureText
    """How a failed tool call reads to the model, in either tool mode."""
    native_correction: bool = False
    """In native tool mode, the correction after an unreadable reply asks for a tool call
    or a plain answer (before: for the JSON object of prompted mode)."""
    unknown_tool_text: UnknownToolText = unknown_tool_observation
    """How a call to a tool that does not exist reads to the model."""
    repetition_cycles: bool = False
    """`guards.Repetition` also stops two calls made in turn whose results were already
    seen (a, b, a, b)."""
    several_calls: bool = False
    """With `max_calls_per_reply` given (more than 1), the prompted format offers several
    independent calls a reply, one JSON object a line, and the run reads them all."""
    resolves_short_names: bool = False
    """A call to a name that is not a tool but a part of exactly one tool's dotted name
    (`uber` for `uber.ride`, `ride` too) is read as a call of that tool."""
    reads_placeholder_names: bool = False
    """A call whose name is the format's placeholder (`tool`, `tool_name`), in a reply
    whose thought names exactly one tool, is read as a call of that tool."""


_REVISION_1 = Revision(
    1,
    _TEXTS_1,
    revision1.WORKSPACE_EXAMPLE_NATIVE,
    hard_limit=False,
    is_final=False,
    wall_clock_any_tool=False,
    skill_own_read=False,
    token_rule=False,
    example_fits_tools=False,
    tools_as_signatures=False,
    shared_parts_first=False,
    notes_stay=False,
    stops_unknown_tools=False,
    failure_text=build_error_observation,
)
_REVISION_2 = dataclasses.replace(
    _REVISION_1,
    number=2,
    texts=_TEXTS_2,
    native_workspace_example=templates.WORKSPACE_EXAMPLE_NATIVE,
    hard_limit=True,
    is_final=True,
    wall_clock_any_tool=True,
    skill_own_read=True,
    token_rule=True,
    example_fits_tools=True,
)
_REVISION_3 = dataclasses.replace(_REVISION_2, number=3, texts=_TEXTS_3, tools_as_signatures=True)
_REVISION_4 = dataclasses.replace(_REVISION_3, number=4, shared_parts_first=True)
_REVISION_5 = dataclasses.replace(_REVISION_4, number=5, texts=_TEXTS_5, notes_stay=True)
_REVISION_6 = dataclasses.replace(
    _REVISION_5,
    number=6,
    texts=dataclasses.replace(_TEXTS_5, unknown_tool_hint=turn_notes.UNKNOWN_TOOL_HINT),
    stops_unknown_tools=True,
    failure_text=failed_call_observation,
    native_correction=True,
)
_REVISION_7 = dataclasses.replace(  # the closest tool named; two calls in turn stopped
    _REVISION_6,
    number=7,
    texts=dataclasses.replace(_TEXTS_5, unknown_tool_hint=turn_notes.NO_TOOL_FITS_HINT),
    unknown_tool_text=unknown_tool_advice,
    repetition_cycles=True,
)

_REVISION_8 = dataclasses.replace(  # the way out when no tool fits; several calls; short names
    _REVISION_7,
    number=8,
    texts=dataclasses.replace(_REVISION_7.texts, format=templates.PROMPTED_FORMAT_8),
    several_calls=True,
    resolves_short_names=True,
)

_REVISION_9 = dataclasses.replace(_REVISION_8, number=9, reads_placeholder_names=True)

REVISIONS: dict[int, Revision] = {
    r.number: r
    for r in (
        _REVISION_1,
        _REVISION_2,
        _REVISION_3,
        _REVISION_4,
        _REVISION_5,
        _REVISION_6,
        _REVISION_7,
        _REVISION_8,
        _REVISION_9,
    )
}
"""Every revision a run can ask for (`AgentOptions.revision`), each the one before with
what it changed."""


def revision_of(number: int) -> Revision:
    """The revision `number` (1 to 9: `AgentOptions` checks it)."""
    return REVISIONS[number]


def format_section(
    tool_mode: str, revision: Revision, has_tools: bool, calls_per_reply: int = 1
) -> str:
    """The reply format: native, or the prompted JSON (only the answer's when no tool is
    offered, since revision 3; with several calls a reply when the run offers them, since
    revision 8)."""
    if tool_mode != "prompted":
        return templates.NATIVE_FORMAT
    if not has_tools:
        return revision.texts.answer_format
    if offers_several_calls(tool_mode, revision, calls_per_reply):
        return templates.SEVERAL_CALLS_FORMAT.format(limit=calls_per_reply)
    return revision.texts.format


def offers_several_calls(tool_mode: str, revision: Revision, calls_per_reply: int) -> bool:
    """Does a prompted reply of this run carry several JSON calls (revision 8 on, with
    `max_calls_per_reply` given and more than 1)?"""
    return tool_mode == "prompted" and revision.several_calls and calls_per_reply > 1


def layout(template: str, revision: Revision) -> str:
    """The template to fill: the builder's own, or for the default one before revision 4
    the layout those runs had (the tools before the format, prompts/_revision3.py)."""
    if not revision.shared_parts_first and template == templates.SYSTEM_PROMPT_TEMPLATE:
        return revision3.SYSTEM_PROMPT_TEMPLATE
    return template


def illustration_heading(template: str, revision: Revision) -> str:
    """The example's heading when the run has no `read`: it points at the run's tools,
    which since revision 4 may come after the example (below) or before it (above)."""
    filled = layout(template, revision)
    tools_first = filled.find("{tool_descriptions}") < filled.find("{examples_section}")
    if not revision.shared_parts_first or tools_first:
        return revision3.ILLUSTRATION_HEADING
    return templates.ILLUSTRATION_HEADING
