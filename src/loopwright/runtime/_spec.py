"""RunSpec: everything needed to build an agent run from plain data (CLI, HTTP, resume).

It is what `run_started` records in its options (under `spec`), never API keys, so
`loopwright runs resume RUN_ID` and the HTTP API can rebuild the same agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.models import Model, resolve_model
from loopwright.prompts import PromptParts
from loopwright.tools import Tool, ToolRegistry, resolve_tools


@dataclass(frozen=True)
class RunSpec:
    request: str
    model: str = "local"
    base_url: str | None = None
    tools: tuple[str, ...] = ()
    """Tool specs as given by the user: built-in names, module:function, file.py:function."""
    workspace: str | None = None
    tenant: str = "default"
    options: AgentOptions = field(default_factory=AgentOptions)
    extra: dict[str, Any] = field(default_factory=dict)
    """Room for features that add their own settings (skills, MCP servers, verification)."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tools"] = list(self.tools)
        data["options"] = self.options.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        return cls(
            request=str(data["request"]),
            model=str(data.get("model") or "local"),
            base_url=data.get("base_url"),
            tools=tuple(data.get("tools") or ()),
            workspace=data.get("workspace"),
            tenant=str(data.get("tenant") or "default"),
            options=AgentOptions.from_dict(data.get("options") or {}),
            extra=dict(data.get("extra") or {}),
        )


def build_agent(
    spec: RunSpec, *, model: Model | None = None, extra_tools: Sequence[Tool] = ()
) -> AgentExecutor:
    """The AgentExecutor a spec describes. The spec is recorded in the run's options.

    `extra` keys understood here: `skill` (a skill folder to run), `allow_skill_commands`,
    `allow_commands` (lets `tools` name `run_command`).
    `extra_tools` are tools from outside the spec's names (MCP servers listed in
    `extra["mcp"]`, connected by the caller for the run's lifetime).
    """
    allow_commands = bool(spec.extra.get("allow_commands"))
    tools = resolve_tools(list(spec.tools), allow_commands=allow_commands)
    registry = ToolRegistry([*tools, *extra_tools])
    option_data = {**spec.options.to_dict(), "extra": {"spec": spec.to_dict()}}
    parts: PromptParts | None = None
    readable: list[Path] = []
    if spec.extra.get("skill"):
        from loopwright.skills import prepare_skill_agent

        parts, allowed, skill_dir = prepare_skill_agent(
            spec.extra["skill"],
            spec.request,
            registry,
            allow_commands=bool(spec.extra.get("allow_skill_commands")),
        )
        option_data["allowed_tools"] = list(allowed) if allowed is not None else None
        readable.append(skill_dir)
    model = model or resolve_model(spec.model, base_url=spec.base_url)
    # recorded in run_started, so a replay without the model builds the same prompt
    option_data["tool_mode"] = spec.options.tool_mode or model.preferred_tool_mode
    return AgentExecutor(
        model,
        registry,
        options=AgentOptions.from_dict(option_data),
        prompt_parts=parts,
        workspace=spec.workspace,
        readable_roots=readable,
    )
