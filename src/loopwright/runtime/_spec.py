"""RunSpec: an agent run as plain, typed data (CLI, HTTP, resume). Never holds a secret.

`run_started` records it (`spec`), so `Runtime.resume(run_id)` rebuilds the same agent
from the store alone. Versioned: `RUN_SPEC_VERSION`; runs stored before the typed spec
(their spec under `options.extra.spec`, with an `extra` dict) are still read.

Versions: 1, then 2 (`options.last_turn` on by default; a version-1 spec reads it as
off, so a run recorded before resumes and replays as it ran), then 3 (the options' `extra`
dict became typed fields: `reply_grammar`, `workspace_context`, `tool_mode_reason`; an
older spec's `extra` is read into them), then 4 (`options.revision` 2: the hard iteration
limit, the system prompt with `is_final` and native few-shot examples, the wall clock by
tools; a spec of version 1 to 3 reads revision 1, so its run replays as it ran), then 5
(`options.revision` 3: the prompted JSON format on one line, the tools as signatures;
a spec of version 4 that names no revision reads 2), then 6 (`options.revision` 4: the
system prompt's shared parts first, the run's tools last; a spec of version 5 that names
no revision reads 3), then 7 (`options.revision` 5: each request's note stays in the
conversation; a spec of version 6 that names no revision reads 4), then 8
(`options.revision` 6: a failed call's advice follows its error; a spec of version 7 that
names no revision reads 5), then 9 (`after`: the run is a follow-up in a conversation;
`fork_of`: the run forks another; a spec of version 8 or older is neither), then 10
(`agent`: the run is of an agent built in Python, which the worker that runs it was
started with, `loopwright worker --agent`; a spec of version 9 or older names none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from loopwright.agent import AgentExecutor, AgentOptions, CommandVerifier, ForkPoint
from loopwright.errors import ConfigurationError
from loopwright.events import Event, RunStartedEvent
from loopwright.models import Model, resolve_model
from loopwright.models._base import context_window_of
from loopwright.prompts import PromptParts
from loopwright.prompts._revisions import REVISIONS
from loopwright.safety.scrub import Scrubber
from loopwright.tools import Tool, ToolRegistry, resolve_tools

RUN_SPEC_VERSION = 10
_READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
_V1_OPTION_DEFAULTS = {"last_turn": False}
"""Options a version-1 spec never names, with the behaviour those runs had."""
_V3_OPTION_DEFAULTS = {"revision": 1}
"""Options a spec of version 1 to 3 never names, with the behaviour those runs had."""
_V4_OPTION_DEFAULTS = {"revision": 2}
"""What a version-4 spec that does not name its revision ran with."""
_V5_OPTION_DEFAULTS = {"revision": 3}
"""What a version-5 spec that does not name its revision ran with."""
_V6_OPTION_DEFAULTS = {"revision": 4}
"""What a version-6 spec that does not name its revision ran with."""
_V7_OPTION_DEFAULTS = {"revision": 5}
"""What a version-7 spec that does not name its revision ran with."""
_V8_OPTION_DEFAULTS = {"revision": 6}
"""What a version-8 spec that does not name its revision ran with (a version-9 spec that
loopwright wrote always names it: `to_dict` writes every option)."""
_LEGACY_EXTRA = ("skill", "allow_skill_commands", "mcp", "allow_commands", "verify")


@dataclass(frozen=True)
class RunSpec:
    """Everything needed to build an agent run, from plain data."""

    request: str
    model: str = "local"
    base_url: str | None = None
    tools: tuple[str, ...] = ()
    """Built-in names, module:function or file.py:function, as the user gave them."""
    workspace: str | None = None
    tenant: str = "default"
    options: AgentOptions = field(default_factory=AgentOptions)
    skill: str | None = None
    """A skill folder to run (SKILL.md)."""
    allow_skill_commands: bool = False
    mcp: tuple[str, ...] = ()
    """MCP servers: a command (stdio) or an http(s) URL each."""
    allow_commands: bool = False
    """Lets `tools` name run_command."""
    verify: str | None = None
    """A shell command that checks the workspace at the end."""
    output_schema: dict[str, Any] | None = None
    """A JSON Schema the final answer must match (structured output)."""
    approve: tuple[str, ...] = ()
    """Tool names and effects whose calls wait for approval (`*`: every call)."""
    after: str | None = None
    """A follow-up: the run of the turn before, whose conversation this run continues."""
    fork_of: ForkPoint | None = None
    """A fork: the run and step whose first steps this run takes from that run's log."""
    agent: str | None = None
    """An agent built in Python (`module:attribute` or `file.py:attribute`), as the workers
    that run it name it (`loopwright worker --agent`): such a worker builds the run from its
    own agent (its model, tools, instructions and options) with this spec's request, tenant
    and conversation; the spec's other fields are not used. Only a worker started with this
    same reference runs it; none imports what a spec names."""
    version: int = RUN_SPEC_VERSION

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data.update(tools=list(self.tools), mcp=list(self.mcp), options=self.options.to_dict())
        data["approve"] = list(self.approve)
        data["fork_of"] = self.fork_of.to_dict() if self.fork_of is not None else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        version = data.get("version", RUN_SPEC_VERSION)
        if version not in _READABLE_VERSIONS:
            readable = ", ".join(map(str, _READABLE_VERSIONS))
            raise ConfigurationError(
                f"run spec version {version!r} is not one this loopwright reads "
                f"(it reads {readable}): upgrade loopwright"
            )
        extra = data.get("extra") or {}  # the untyped shape of runs stored before v1
        known = {f.name for f in fields(cls)}
        merged = {**{k: extra[k] for k in _LEGACY_EXTRA if k in extra}, **data}
        unknown = sorted(set(merged) - known - {"extra"})
        if unknown:
            raise ConfigurationError(f"run spec: unknown field(s) {', '.join(unknown)}")
        values = {k: v for k, v in merged.items() if k in known}
        values["request"] = str(values.get("request") or "")
        values["model"] = str(values.get("model") or "local")
        values["tools"] = tuple(values.get("tools") or ())
        values["mcp"] = tuple(values.get("mcp") or ())
        values["approve"] = tuple(values.get("approve") or ())
        values["fork_of"] = _fork_point(values.get("fork_of"))
        values["agent"] = _agent_ref(values.get("agent"))
        options = dict(values.get("options") or {})
        if version == 1:
            options = {**_V1_OPTION_DEFAULTS, **options}
        if version <= 3:
            options = {**_V3_OPTION_DEFAULTS, **options}
        if version == 4:
            options = {**_V4_OPTION_DEFAULTS, **options}
        if version == 5:
            options = {**_V5_OPTION_DEFAULTS, **options}
        if version == 6:
            options = {**_V6_OPTION_DEFAULTS, **options}
        if version == 7:
            options = {**_V7_OPTION_DEFAULTS, **options}
        if version == 8:
            options = {**_V8_OPTION_DEFAULTS, **options}
        values["options"] = AgentOptions.from_dict(options)
        values["version"] = RUN_SPEC_VERSION  # read as today's spec, with v1's behaviour kept
        return cls(**values)


def _agent_ref(data: object) -> str | None:
    if data is None:
        return None
    if not isinstance(data, str) or not data.strip():
        raise ConfigurationError(f"run spec: agent must be module:attribute, not {data!r}")
    return data.strip()


def _fork_point(data: object) -> ForkPoint | None:
    if data is None:
        return None
    if isinstance(data, ForkPoint):
        return data
    if not isinstance(data, dict) or set(data) != {"run_id", "step"}:
        raise ConfigurationError(f"run spec: fork_of must be {{run_id, step}}, not {data!r}")
    return ForkPoint.from_dict(data)


def recorded_spec(events: Sequence[Event]) -> RunSpec | None:
    """The RunSpec a run was started from, or None (it was started from code)."""
    first = events[0] if events else None
    if not isinstance(first, RunStartedEvent):
        return None
    data = first.spec
    if data is None:  # v1 events: the spec was kept in the options
        data = first.options.get("extra", {}).get("spec")
    return RunSpec.from_dict(data) if isinstance(data, dict) else None


def build_agent(
    spec: RunSpec,
    model: Model | None = None,
    extra_tools: Sequence[Tool] = (),
    *,
    scrubber: Scrubber | None = None,
) -> AgentExecutor:
    """The AgentExecutor a spec describes (the model: resolved from the spec when not
    given); `extra_tools` are its MCP servers' tools; `scrubber` the run's (by default
    `Scrubber.default()`, which reads this process's environment). A spec that names an
    `agent` is refused: only a worker started with that agent builds it."""
    if spec.agent is not None:
        raise ConfigurationError(
            f"the run's spec names the agent {spec.agent!r}, built in Python: it runs on "
            f"Temporal workers started with --agent {spec.agent} (--engine temporal)"
        )
    model = model or resolve_model(spec.model, base_url=spec.base_url)
    tools = resolve_tools(list(spec.tools), allow_commands=spec.allow_commands)
    registry = ToolRegistry([*tools, *extra_tools])
    option_data = spec.options.to_dict()
    parts: PromptParts | None = None
    readable: list[Path] = []
    if spec.skill:
        from loopwright.skills._executor import prepare_skill_agent

        skill = prepare_skill_agent(
            spec.skill,
            spec.request,
            registry,
            allow_commands=spec.allow_skill_commands,
            context_window=spec.options.context_window or context_window_of(model),
            own_read=REVISIONS[spec.options.revision].skill_own_read,
        )
        parts, registry = skill.prompt_parts, skill.registry
        allowed = skill.allowed_tools
        option_data["allowed_tools"] = list(allowed) if allowed is not None else None
        readable.append(skill.folder)
    # recorded in run_started, so a replay without the model builds the same prompt
    option_data["tool_mode"] = spec.options.tool_mode or model.preferred_tool_mode
    return AgentExecutor(
        model,
        registry,
        options=AgentOptions.from_dict(option_data),
        prompt_parts=parts,
        workspace=spec.workspace,
        readable_roots=readable,
        verifier=CommandVerifier(spec.verify) if spec.verify else None,
        output_type=spec.output_schema,
        approve=list(spec.approve) or None,
        scrubber=scrubber,
    )
