"""What goes in the newest message of a turn, never in the system prompt (so the prompt
and the history stay a cacheable prefix): the iteration note, prompted mode's progress note
with its recap of the latest tool results, an observation, and the correction sent after a
reply that could not be read."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any


def iteration_note(iteration: int, max_iterations: int) -> str:
    """Goes in the newest message, never the system prompt (keeps the prompt cache warm).

    Worded without an `i/n` fraction: small models copied "3/10" into tool arguments.
    """
    return f"[Iteration {iteration} of at most {max_iterations}]"


RECAP_STEPS = 6
RECAP_RESULT_CHARS = 200
RECAP_TASK_CHARS = 600
NEXT_STEP_HINT = (
    "If the task needs another tool call, make it now; "
    "if these results answer the task, reply with final_answer."
)
"""How a progress note ends up to revision 4."""

EVERY_PART_HINT = (
    "If a part of the task has no result yet, call a tool for it now; "
    "reply with final_answer only when these results answer every part of the task."
)
"""How it ends since revision 5: with the hint before, the 1.5B model answered "Is it warmer
in Tokyo or in Oslo?" after Tokyo's weather alone, inventing Oslo's."""


UNKNOWN_TOOL_HINT = (
    "If a listed tool fits the task, call it; if none does, reply with final_answer "
    "from what you know."
)
"""How a progress note ends after a call to a tool that does not exist (since revision 6):
with the every-part hint, the 1.5B model, asked to say hello with only add and multiply,
called `say`, then `search` three times, until the repetition policy stopped it."""


NO_TOOL_FITS_HINT = (
    "If a listed tool does what the task asks, call it by its exact name; if none does, "
    "reply with final_answer in one or two sentences."
)
"""How it ends since revision 7: with the hint before, the 1.5B model, asked a question none
of its tools fits, called an invented tool, then after the refusal a real but unsuitable one
(BFCL's irrelevance questions), or answered at length."""


LAST_TURN_HINT = "No tool can be called now: reply with final_answer from these results."


def recap_line(tool_name: str, arguments: Mapping[str, Any], result: str, is_error: bool) -> str:
    """One tool result as the progress note lists it: `add({"a": 1, "b": 2}) returned 3`."""
    args = json.dumps(dict(arguments), ensure_ascii=False, sort_keys=True, default=str)
    outcome = "failed" if is_error else "returned"
    return f"{tool_name}({args}) {outcome} {summarize(result, RECAP_RESULT_CHARS)}"


def progress_note(
    iteration: int,
    max_iterations: int,
    request: str,
    recap: Sequence[str],
    *,
    last_turn: bool = False,
    next_step_hint: str = NEXT_STEP_HINT,
) -> str:
    """The iteration note for prompted mode: the task and the latest tool results, restated.

    Small local models lose the thread after a few observations: measured on the embedded
    1.5B model, a two-step arithmetic chain looped until the iteration limit with the bare
    note and finished with this one. Like `iteration_note` it goes in the newest message
    only, so the system prompt and the history stay a cacheable prefix; it lists at most
    the last RECAP_STEPS results, so its cost does not grow with the run. In a last turn
    (no tool offered) it does not invite another call.
    """
    head = iteration_note(iteration, max_iterations)
    if not recap:
        return head
    shown = recap[-RECAP_STEPS:]
    lines = [head, f"Task: {summarize(request, RECAP_TASK_CHARS)}", "Tool results so far:"]
    if len(recap) > len(shown):
        lines.append(f"- ({len(recap) - len(shown)} earlier results in the conversation above)")
    lines.extend(f"- {line}" for line in shown)
    lines.append(LAST_TURN_HINT if last_turn else next_step_hint)
    return "\n".join(lines)


def summarize(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def observation_text(tool_name: str, content: str, summary: str = "") -> str:
    """A tool's result as prompted mode sends it, with what the tool returns when `summary`
    says (`tool_summary`): `Observation from product_price (the price in USD of a product
    in the shop catalogue): 189.0`."""
    said = f" ({summary})" if summary else ""
    return f"Observation from {tool_name}{said}: {content}"


TOOL_SUMMARY_CHARS = 100


def tool_summary(description: str) -> str:
    """The first line of a tool's description, as an observation restates it (since revision
    5): the 1.5B model read the monitor's price, 189.0, as EUR although the tool list said
    USD, and with the unit beside the number it converted it. Cut to TOOL_SUMMARY_CHARS; a
    capital that starts a sentence is lowered (`The price` but not `URL`)."""
    first = description.strip().split("\n", 1)[0].strip().rstrip(".")
    if first[1:2].islower():
        first = first[0].lower() + first[1:]
    return summarize(first, TOOL_SUMMARY_CHARS)


CORRECTION_TEMPLATE = (
    "Your last reply could not be read: {problem}\n"
    "Reply again with exactly one JSON object, either\n"
    '{{"thought": "...", "action": "<tool name>", "action_input": {{...}}}}\n'
    'or {{"thought": "...", "final_answer": "..."}}.'
)


NATIVE_CORRECTION = (
    "Your last reply could not be read: {problem}.\n"
    "Reply again: call one of your tools, or give your final answer as plain text."
)
_JSON_ADVICE = re.compile(r"\W*(?:put your JSON inside it|reply with one JSON object)\b.*$", re.S)


def correction_message(problem: str, *, native: bool = False) -> str:
    """The correction after an unreadable reply. `native`: a run in native tool mode at
    the newest revision, asked for a tool call or a plain answer; the parsers' advice to
    write JSON is left out of the problem (older revisions and prompted mode: the JSON
    object, as their runs were made with it)."""
    if native:
        return NATIVE_CORRECTION.format(problem=_JSON_ADVICE.sub("", problem))
    return CORRECTION_TEMPLATE.format(problem=problem)
