"""Options of an agent run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from loopwright.errors import ConfigurationError
from loopwright.guards import DeclaredTool, default_wall_clock, progress_signal

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
    """Wall clock of the whole run, seconds. None: the default for the run's tools (30 min
    if one may change things, else 10 min; see `for_tools`); 0: no wall clock."""
    iteration_timeout_s: float | None = None
    tool_timeout_s: float = 60.0
    max_tokens_total: int | None = None
    max_cost: float | None = None
    repetition_threshold: int = 3
    no_progress_limit: int = 5
    progress_signal: Literal["auto", "files", "observations"] = "auto"
    """What the no-progress stop counts: file modifications, new observations, or (auto)
    files when the run has file-modifying tools."""
    context_window: int | None = None
    allowed_tools: tuple[str, ...] | None = None
    max_calls_per_reply: int = 8
    """Tool calls run per model reply; the rest are answered with an observation."""
    output_retries: int = 1
    """With an output type: how often an answer that does not validate goes back to the
    model (with the errors) before the run fails."""
    constrained_output: bool = True
    """With an output type: ask backends that can for output constrained to its schema."""
    approval_timeout_s: float = 300.0
    """How long a tool call that needs approval waits for a decision; then it is not run."""
    last_turn: bool = True
    """After a repetition or no-progress stop, one more model call, with no tool offered,
    for the final answer from the results already observed (the run then ends answered
    instead of stopped). Measured on the eval suite in docs/models.md: the 0.5B 4 -> 10/40,
    the 1.5B 26 -> 27/40, no task lost. Runs recorded before this option read as off."""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.tier not in ITERATION_TIERS:
            known = ", ".join(ITERATION_TIERS)
            raise ConfigurationError(f"unknown tier {self.tier!r} (use one of: {known})")
        if self.max_iterations is not None and self.max_iterations < 1:
            raise ConfigurationError("max_iterations must be at least 1")
        if self.parse_retries < 0:
            raise ConfigurationError("parse_retries must be 0 or more")
        if self.timeout_s is not None and self.timeout_s < 0:
            raise ConfigurationError("timeout_s must be 0 (no wall clock) or more")
        if self.progress_signal not in ("auto", "files", "observations"):
            raise ConfigurationError(
                f"unknown progress_signal {self.progress_signal!r} "
                "(use one of: auto, files, observations)"
            )
        if self.approval_timeout_s <= 0:
            raise ConfigurationError("approval_timeout_s must be more than 0")
        if self.output_retries < 0:
            raise ConfigurationError("output_retries must be 0 or more")
        if self.max_calls_per_reply < 1:
            raise ConfigurationError("max_calls_per_reply must be at least 1")

    def for_tools(self, tools: Iterable[DeclaredTool], model: Any = None) -> AgentOptions:
        """These options with the defaults that depend on the run's tools (wall clock,
        progress signal) and model (tool mode, and why, when the model says) filled in, so
        `run_started` records what is in force. Kept per options object (an executor is
        often made per request with the same options)."""
        tools = list(tools)
        wall_clock = default_wall_clock(tools) if self.timeout_s is None else None
        signal = progress_signal(tools) if self.progress_signal == "auto" else None
        mode = reason = None
        if self.tool_mode is None and model is not None:
            mode = "native" if model.preferred_tool_mode == "native" else "prompted"
            reason = getattr(model, "tool_mode_reason", None)
        key = (wall_clock, signal, mode, reason)
        known: dict[tuple[Any, ...], AgentOptions] = self.__dict__.setdefault("_for_tools", {})
        resolved = known.get(key)
        if resolved is None:
            changes: dict[str, Any] = {}
            if wall_clock is not None:
                changes["timeout_s"] = wall_clock
            if signal is not None:
                changes["progress_signal"] = signal
            if mode is not None:
                changes["tool_mode"] = mode
            if isinstance(reason, str) and reason != "given":
                changes["extra"] = {**self.extra, "tool_mode_reason": reason}
            resolved = self._with_resolved(changes) if changes else self
            known[key] = resolved
        return resolved

    def _with_resolved(self, changes: dict[str, Any]) -> AgentOptions:
        """A copy with the defaults `for_tools` resolved. Not `dataclasses.replace`: these
        values come from this module, so re-running the checks of `__post_init__` only
        costs (~25 µs of a run's ~300 µs cold start, bench/overhead.py at N=20)."""
        resolved = object.__new__(AgentOptions)
        fields = {name: value for name, value in self.__dict__.items() if name != "_for_tools"}
        resolved.__dict__.update(fields, **changes)
        return resolved

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
