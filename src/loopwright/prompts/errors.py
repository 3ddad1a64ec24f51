"""Observation texts the model reads when something went wrong (seed 002)."""

from __future__ import annotations


def build_error_observation(tool_name: str, error: str, retry_count: int) -> str:
    """Observation message for a failed tool call."""
    return (
        f"Tool '{tool_name}' failed: {error}\n"
        f"Attempt {retry_count}. Please try again with different parameters "
        f"or use an alternative approach."
    )
