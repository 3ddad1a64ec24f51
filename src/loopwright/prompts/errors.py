"""Observation texts the model reads when something went wrong (seed 002)."""

from __future__ import annotations

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
