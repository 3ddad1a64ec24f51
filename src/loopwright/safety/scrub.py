"""Secret scrubbing: every observation passes through here before anyone sees it.

Minimal version: exact values of configured secrets. The full detector set lands with
the guardrails issue.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ScrubResult:
    text: str
    redactions: int


class Scrubber:
    """Replaces secrets with `[REDACTED:<kind>]`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def scrub(self, text: str) -> ScrubResult:
        count = 0
        for secret in self._secrets:
            if secret in text:
                count += text.count(secret)
                text = text.replace(secret, "[REDACTED:configured]")
        return ScrubResult(text, count)
