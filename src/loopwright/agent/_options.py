"""Options of an agent run."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from loopwright.errors import ConfigurationError
from loopwright.events import Event, RunStartedEvent
from loopwright.guards._defaults import DeclaredTool, default_wall_clock, progress_signal
from loopwright.prompts._revisions import REVISIONS

Tier = Literal["trivial", "standard", "complex"]
ITERATION_TIERS: dict[str, int] = {"trivial": 5, "standard": 10, "complex": 20}
DEFAULT_CALLS_PER_REPLY = 8
"""The calls a reply runs when `max_calls_per_reply` is not given."""
LEGACY_EXTRA = ("reply_grammar", "workspace_context", "tool_mode_reason")
"""The options that runs recorded before they were fields kept in `extra`."""


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
    """Wall clock of the whole run, seconds. None: the default for the run (30 min with
    tools, 10 min without: seed 003's agentic and simple runs; see `for_tools`); 0: none."""
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
    max_calls_per_reply: int | None = None
    """Tool calls run per model reply; the rest are answered with an observation. None:
    8 (native calls, or several `<tool_call>` tags), and a prompted reply is read for one
    JSON call. Given in prompted mode (revision 8 on), the system prompt offers up to this
    many independent calls a reply, one JSON object a line, and the run reads and runs
    them in order as one step: a call that fails or waits for approval ends the batch
    (the calls after it were written without its result). 1: one call a reply."""
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
    answer_tools: tuple[str, ...] = ()
    """Tools whose result is the run's answer: once a reply's calls include one that
    succeeds, the run completes with its result (the results of such calls of that reply,
    one a line), without another model call to restate it. Empty: the model always writes
    the answer. Runs recorded before this option read as empty."""
    reply_grammar: bool = False
    """In prompted mode, ask backends that can for replies constrained to the run's tools
    and their arguments, or a final answer (agent/_reply_grammar.py; measured on the eval
    suite in docs/models.md)."""
    workspace_context: str | None = None
    """The WORKSPACE section of the system prompt (None: made from the workspace and the
    request when the agent has workspace tools). Recorded with the run, so a resumed run
    gets the same prompt."""
    tool_mode_reason: str | None = None
    """Why the model chose its tool mode, when it says (set by the agent from the model,
    e.g. Ollama's capabilities)."""
    revision: int = 9
    """Which revision of the engine's behaviour: 9 (today: revision 8's, with a call whose
    name is the format's placeholder (`tool`, `tool_name`), in a reply of one call whose
    thought names exactly one tool, read as a call of that tool), 8 (revision 7's, with a call to a
    shortened dotted name (`uber`) that names exactly one tool's part (`uber.ride`) read as
    a call of that tool, the prompted format asking for a one-sentence answer when no tool
    fits, and, with `max_calls_per_reply` given, several JSON calls a prompted reply),
    7 (revision 6's, with a call to a
    tool that does not exist told the closest tool's name (`uber` for `uber.ride`), or else
    to answer in a sentence, and two calls made in turn (`a, b, a, b`) with results already
    seen stopped as a repetition), 6 (revision 5's, with a failed
    call's observation advising what its error asks for (the same call again, a fixed
    argument, or an answer) instead of "try again with different parameters", and after a
    call to a tool that does not exist a progress note that offers the listed tools or an
    answer; `repetition_threshold` calls in a row to tools that do not exist stop the run
    with `no_progress`), 5 (revision 4's, with each
    request's note (the iteration, and in prompted mode the task and the latest results)
    left in the conversation, so each request starts with the whole one before and a
    prompt cache evaluates only the new turn), 4 (revision 3's, with the system
    prompt's shared parts first and the run's tools last, so a server's prompt cache reuses
    them across runs), 3 (revision 2's, with the prompted JSON format written on one line
    and the tools listed as signatures), 2 (a hard
    iteration limit whose last call is offered without tools, the system prompt with
    `is_final` and a native few-shot example, a 30 min wall clock for any run with tools)
    or 1. Runs recorded with RunSpec 1 to 3 read as 1, with RunSpec 4 as 2, with
    RunSpec 5 as 3, with RunSpec 6 as 4 and with RunSpec 7 as 5, so they resume and replay
    as they ran."""

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
        if self.max_calls_per_reply is not None and self.max_calls_per_reply < 1:
            raise ConfigurationError("max_calls_per_reply must be at least 1")
        if self.revision not in REVISIONS:
            known = ", ".join(map(str, REVISIONS))
            raise ConfigurationError(f"unknown revision {self.revision!r} (use one of: {known})")

    def for_tools(self, tools: Iterable[DeclaredTool], model: Any = None) -> AgentOptions:
        """These options with the defaults that depend on the run's tools (wall clock,
        progress signal) and model (tool mode, and why, when the model says) filled in, so
        `run_started` records what is in force."""
        tools = list(tools)
        changes: dict[str, Any] = {}
        if self.timeout_s is None:
            any_tool = REVISIONS[self.revision].wall_clock_any_tool
            changes["timeout_s"] = default_wall_clock(tools, any_tool=any_tool)
        if self.progress_signal == "auto":
            changes["progress_signal"] = progress_signal(tools)
        if self.tool_mode is None and model is not None:
            changes["tool_mode"] = "native" if model.preferred_tool_mode == "native" else "prompted"
            reason = getattr(model, "tool_mode_reason", None)
            if isinstance(reason, str) and reason != "given":
                changes["tool_mode_reason"] = reason
        return dataclasses.replace(self, **changes) if changes else self

    @property
    def calls_per_reply(self) -> int:
        """The most tool calls a reply runs (`max_calls_per_reply`, 8 when not given)."""
        return self.max_calls_per_reply or DEFAULT_CALLS_PER_REPLY

    @property
    def iteration_limit(self) -> int:
        return self.max_iterations or ITERATION_TIERS[self.tier]

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        if self.allowed_tools is not None:
            data["allowed_tools"] = list(self.allowed_tools)
        data["answer_tools"] = list(self.answer_tools)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentOptions:
        """The options a run recorded (runs recorded before these fields existed kept
        `reply_grammar`, `workspace_context` and `tool_mode_reason` in an `extra` dict)."""
        legacy = data.get("extra") or {}
        merged = {**{k: legacy[k] for k in LEGACY_EXTRA if k in legacy}, **data}
        known = {k: v for k, v in merged.items() if k in cls.__dataclass_fields__}
        if known.get("allowed_tools") is not None:
            known["allowed_tools"] = tuple(known["allowed_tools"])
        known["answer_tools"] = tuple(known.get("answer_tools") or ())
        return cls(**known)


def recorded_workspace_section(recorded: Sequence[Event]) -> str | None:
    """The workspace section an earlier process of this run used, read from the options its
    `run_started` event recorded (None: no earlier process)."""
    if not recorded or not isinstance(recorded[0], RunStartedEvent):
        return None
    return AgentOptions.from_dict(recorded[0].options).workspace_context or ""


def recorded_revision(recorded: Sequence[Event]) -> int | None:
    """The revision an earlier process of this run ran with, as its `run_started` event
    recorded it (None: no earlier process, or one that did not record it)."""
    if not recorded or not isinstance(recorded[0], RunStartedEvent):
        return None
    revision = recorded[0].options.get("revision")
    return revision if isinstance(revision, int) else None
