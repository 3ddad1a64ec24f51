"""Observation texts the model reads when something went wrong (seed 002)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

FailureText = Callable[[str, str, int], str]
"""A failed call's observation from the tool's name, the error and the how-manieth failure
of that tool in the run it is."""


def build_error_observation(tool_name: str, error: str, retry_count: int) -> str:
    """Observation message for a failed tool call (seed 002; prompt revisions 1 to 5)."""
    return (
        f"Tool '{tool_name}' failed: {error}\n"
        f"Attempt {retry_count}. Please try again with different parameters "
        f"or use an alternative approach."
    )


FAILED_CALL_ADVICE = (
    "If the error asks you to retry, make the same call again; if it names a wrong "
    "argument, fix it; if no tool fits the task, reply with final_answer from what you know."
)


def failed_call_observation(tool_name: str, error: str, retry_count: int) -> str:
    """A failed call's observation since prompt revision 6: the error, then advice that
    follows it. Seed 002's "try again with different parameters" contradicted errors that
    ask for the same call again: on "price service busy, please retry the same call" the
    1.5B model asked for seven other ticker symbols (each busy on its first call) and
    never got the price. The attempt count is not shown (`retry_count` is unused)."""
    del retry_count
    return f"Tool '{tool_name}' failed: {error}\n{FAILED_CALL_ADVICE}"


def unknown_tool_observation(tool_name: str, known: list[str]) -> str:
    """Observation for a call to a tool that does not exist.

    Small models invent tools (`calculate`, `search`) for questions they could answer
    themselves, and "try again" made them call the invented tool until the repetition
    policy stopped the run; this says plainly that answering directly is the way out.
    """
    tools = ", ".join(known) if known else "none"
    return (
        f"There is no tool named '{tool_name}'. The only tools are: {tools}.\n"
        "If none of them fits the task, do not call a tool: give the final answer "
        "from what you know."
    )


UnknownToolText = Callable[[str, list[str]], str]
"""A call's observation when it names a tool that does not exist, from the name it used and
the names of the tools there are."""


def closest_tool(name: str, known: list[str]) -> str | None:
    """The tool `name` most likely meant: the one whose dotted name has `name` as a part
    (`uber` for `uber.ride`) or ends with it, else the nearest spelling; None if none is close."""
    wanted = name.strip().lower()
    if not wanted:
        return None
    by_part = [
        k
        for k in known
        if wanted in k.lower().replace("-", ".").replace("_", ".").split(".")
        or k.lower().endswith(f".{wanted}")
    ]
    if len(by_part) == 1:
        return by_part[0]
    lowered = {k.lower(): k for k in known}
    near = difflib.get_close_matches(wanted, list(lowered), n=1, cutoff=0.75)
    return lowered[near[0]] if near else None


def dotted_part_match(name: str, known: list[str]) -> str | None:
    """The one tool whose dotted name has `name` as a whole part (`uber` or `ride` for
    `uber.ride`), when exactly one has and `name` is no tool itself; else None. Since
    revision 8 such a call is read as a call of that tool: the advice named it, and the
    1.5B model, told so, still answered instead of calling it."""
    wanted = name.strip().lower()
    if not wanted or "." in wanted or name in known:
        return None
    found = [k for k in known if "." in k and wanted in k.lower().split(".")]
    return found[0] if len(found) == 1 else None


PLACEHOLDER_NAMES = ("tool", "tool_name")
"""Names a reply writes as its action when it copies the format's placeholder
(`"action": "tool_name"`) instead of the tool it means."""


def placeholder_match(name: str, thought: str | None, known: list[str]) -> str | None:
    """The one tool a reply's own thought names, when its action is the format's
    placeholder (`tool`, `tool_name`) and no tool has that name; else None. Since revision
    9 such a call is read as a call of that tool: the 1.5B model wrote `"thought": "...
    using kinematics.final_velocity_from_distance function.", "action": "tool"` (BFCL's
    simple_python_30), was refused, and answered from its own arithmetic."""
    if name.strip().lower() not in PLACEHOLDER_NAMES or name in known or not thought:
        return None
    named = [k for k in known if re.search(rf"(?<![\w.-]){re.escape(k)}(?![\w-]|\.\w)", thought)]
    return named[0] if len(named) == 1 else None


NO_TOOL_FITS = (
    "If one of them does what the task asks, call it by its exact name; if none does, do "
    "not call a tool: reply with final_answer in one or two sentences."
)
"""Both ways out, the listed tool first: worded "if none does, say that no tool here can do
it", the 1.5B model, refused `search` when it had `spotify.play`, answered instead of
calling it (BFCL's parallel_0)."""


def unknown_tool_advice(tool_name: str, known: list[str]) -> str:
    """Observation for a call to a tool that does not exist since prompt revision 7: when
    one tool is close to the name (a shortened dotted name, a misspelling), it is named;
    either way the way out when no listed tool fits is an answer of a sentence or two. With
    revision 6's text, the 1.5B model that called `uber` for `uber.ride` gave up (no call),
    and on questions no tool fits it called a real but unsuitable tool after the refusal,
    or answered in 100 to 500 tokens."""
    tools = ", ".join(known) if known else "none"
    text = f"There is no tool named '{tool_name}'. The only tools are: {tools}.\n"
    meant = closest_tool(tool_name, known)
    if meant is not None:
        return text + (
            f"Did you mean '{meant}'? If it does what the task asks, call it by that exact "
            "name; if no tool does, do not call one: reply with final_answer in one or two "
            "sentences."
        )
    return text + NO_TOOL_FITS
