"""Options of an agent run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from loopwright.errors import ConfigurationError

Tier = Literal["trivial", "standard", "complex"]
ITERATION_TIERS: dict[str, int] = {"trivial": 5, "standard": 10, "complex": 20}


@dataclass(frozen=True)
class AgentOptions:
    """How an agent run behaves. Every field is recorded in `run_started` for resume."""

    max_iterations: int | None = None
    tier: Tier = "standard"
    tool_mode: Literal["native", "prompted"] | None = None
    parse_retries: int = 1
    temperature: float | None = 0.0
    max_output_tokens: int | None = None
    timeout_s: float | None = None
    iteration_timeout_s: float | None = None
    tool_timeout_s: float = 60.0
    max_tokens_total: int | None = None
    max_cost: float | None = None
    repetition_threshold: int = 3
    no_progress_limit: int = 5
    context_window: int | None = None
    allowed_tools: tuple[str, ...] | None = None
    max_calls_per_reply: int = 8
    """Tool calls run per model reply; the rest are answered with an observation."""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.tier not in ITERATION_TIERS:
            known = ", ".join(ITERATION_TIERS)
            raise ConfigurationError(f"unknown tier {self.tier!r} (use one of: {known})")
        if self.max_iterations is not None and self.max_iterations < 1:
            raise ConfigurationError("max_iterations must be at least 1")
        if self.parse_retries < 0:
            raise ConfigurationError("parse_retries must be 0 or more")
        if self.max_calls_per_reply < 1:
            raise ConfigurationError("max_calls_per_reply must be at least 1")

    @property
    def iteration_limit(self) -> int:
        return self.max_iterations or ITERATION_TIERS[self.tier]

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["extra"] = dict(self.extra)
        if self.allowed_tools is not None:
            data["allowed_tools"] = list(self.allowed_tools)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentOptions:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        if known.get("allowed_tools") is not None:
            known["allowed_tools"] = tuple(known["allowed_tools"])
        return cls(**known)
