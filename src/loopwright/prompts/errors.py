"""Observation texts the model reads when something went wrong (seed 002)."""

from __future__ import annotations


def build_error_observation(tool_name: str, error: str, retry_count: int) -> str:
    """Observation message for a failed tool call."""
    return (
        f"Tool '{tool_name}' failed: {error}\n"
        f"Attempt {retry_count}. Please try again with different parameters "
        f"or use an alternative approach."
    )


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
