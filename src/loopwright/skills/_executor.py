"""AutonomousSkillExecutor (seed 000): a skill run on the one AgentExecutor loop."""

from __future__ import annotations

import copy
import dataclasses
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopwright.agent import AgentExecutor, AgentOptions, ExecutionResult
from loopwright.agent._lineage import NO_LINEAGE, Lineage
from loopwright.agent._setup import RunSetup
from loopwright.events import Event
from loopwright.models import Model, resolve_model
from loopwright.models._base import context_window_of
from loopwright.prompts import PromptBuilder, PromptParts
from loopwright.prompts._builder import check_template
from loopwright.run_context import RunContext
from loopwright.skills._fit import check_fits
from loopwright.skills._own_read import READ_TOOL, with_skill_read
from loopwright.skills._preprocess import (
    ContextLoader,
    DynamicInjector,
    LoadedContext,
    StringSubstitutor,
)
from loopwright.skills._skill import Skill, load_skill
from loopwright.tools import ToolExecutor, ToolRegistry


@dataclass(frozen=True)
class AutonomousConfig:
    """How a skill runs. `options` are the agent's (iterations, budget, timeouts...)."""

    max_iterations: int = 15
    options: AgentOptions = field(default_factory=AgentOptions)
    model: str = "local"
    base_url: str | None = None
    system_prompt_template: str | None = None
    """The system prompt's template (`PromptBuilder`'s placeholders, seed 002's too); a line
    naming `{iteration}` is left out, the iteration goes in the newest message (the prompt
    stays cached); None: loopwright's own."""

    def __post_init__(self) -> None:
        if self.system_prompt_template is not None:
            check_template(self.system_prompt_template)


class SkillAgent(AgentExecutor):
    """An AgentExecutor whose tool calls go through the ToolExecutor the skill was given:
    a copy per run (same class, timeout, output limit and scrubber) with the run's allowed
    tools and context (run id, workspace, readable folders)."""

    def __init__(self, *args: Any, tool_executor: ToolExecutor, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.given_tool_executor = tool_executor

    def setup(
        self,
        request: str,
        context: RunContext,
        *,
        spec: dict[str, Any] | None = None,
        workspace_section: str | None = None,
        lineage: Lineage = NO_LINEAGE,
        goes_on: bool = True,
    ) -> RunSetup:
        setup = super().setup(
            request, context, spec=spec, workspace_section=workspace_section, lineage=lineage,
            goes_on=goes_on,
        )  # fmt: skip
        executor = copy.copy(self.given_tool_executor)
        executor.registry = setup.tool_executor.registry
        executor.context = setup.tool_executor.context
        executor._failures = {}  # attempt counts are per run
        return dataclasses.replace(setup, tool_executor=executor)


class AutonomousSkillExecutor:
    """Runs a skill autonomously: preprocess its content, build the prompt, run the loop."""

    def __init__(
        self,
        skill: Skill,
        tool_registry: ToolRegistry,
        tool_executor: ToolExecutor | None = None,
        config: AutonomousConfig | None = None,
        context_loader: ContextLoader | None = None,
        dynamic_injector: DynamicInjector | None = None,
        string_substitutor: StringSubstitutor | None = None,
        *,
        model: Model | None = None,
        workspace: str | Path | None = None,
    ) -> None:
        self.skill = skill
        self.tool_registry = tool_registry
        self.tool_executor = tool_executor
        self.config = config or AutonomousConfig()
        self.context_loader = context_loader or ContextLoader()
        self.dynamic_injector = dynamic_injector or DynamicInjector()
        self.string_substitutor = string_substitutor or StringSubstitutor()
        self._model = model
        self.workspace = workspace

    async def build_agent(
        self, user_request: str, *, task_id: str = "", session_id: str = ""
    ) -> AgentExecutor:
        """The AgentExecutor for one request: preprocessing done, prompt parts filled in."""
        context = self.context_loader.load(self.skill)
        content = self.string_substitutor.substitute(
            self.skill.content,
            arguments=user_request,
            skill_dir=str(self.skill.path),
            session_id=session_id,
            task_id=task_id,
        )
        content = await self.dynamic_injector.inject(content, self.skill.path)
        registry = with_skill_read(
            self.tool_registry, self.skill.path, len(context.available_files)
        )
        allowed = skill_allowed_tools(self.skill, context, registry)
        options = _options(self.config, allowed)
        parts = skill_prompt_parts(self.skill, content, context)
        parts = dataclasses.replace(parts, max_iterations=options.iteration_limit)
        executor = self.tool_executor
        template = self.config.system_prompt_template
        common: dict[str, Any] = {
            "options": options,
            "prompt_parts": parts,
            "prompt_builder": PromptBuilder(template) if template is not None else None,
            "scrubber": executor.scrubber if executor else None,
            "workspace": self.workspace or (executor.context.workspace if executor else None),
            "readable_roots": [self.skill.path],
        }
        model = self._model or resolve_model(self.config.model, base_url=self.config.base_url)
        window = self.config.options.context_window or context_window_of(model)
        check_fits(self.skill, parts, window)
        if executor is None:
            return AgentExecutor(model, registry, **common)
        return SkillAgent(model, registry, tool_executor=executor, **common)

    async def execute(
        self,
        user_request: str,
        task_id: str | None = None,
        session_id: str | None = None,
        tenant_id: str = "default",
    ) -> AsyncIterator[Event]:
        """Stream the run's events."""
        task_id = task_id or f"task_{uuid.uuid4().hex[:12]}"
        agent = await self.build_agent(user_request, task_id=task_id, session_id=session_id or "")
        async for event in agent.stream(user_request, tenant=tenant_id):
            yield event

    async def execute_sync(
        self,
        user_request: str,
        task_id: str | None = None,
        session_id: str | None = None,
        tenant_id: str = "default",
    ) -> ExecutionResult:
        """Run to the end and return the result (no streaming)."""
        task_id = task_id or f"task_{uuid.uuid4().hex[:12]}"
        agent = await self.build_agent(user_request, task_id=task_id, session_id=session_id or "")
        return await agent.run(user_request, tenant=tenant_id)


def skill_allowed_tools(
    skill: Skill, context: LoadedContext, registry: ToolRegistry
) -> tuple[str, ...] | None:
    """The skill's allowed-tools that `registry` has, plus `read` when the skill has
    supporting files to load (None: every tool of the registry)."""
    allowed = skill.metadata.allowed_tools
    if allowed is None:
        return None
    extra = (READ_TOOL,) if context.available_files else ()
    return tuple(name for name in dict.fromkeys((*allowed, *extra)) if name in registry)


def known_tool_names(registry: ToolRegistry) -> set[str]:
    """Every tool a skill may name: loopwright's own tools and this run's registry."""
    from loopwright.tools import BUILTIN_TOOLS

    workspace_tools = {"write_file", "edit_file", "grep", "glob", "run_command"}
    return set(registry.names()) | set(BUILTIN_TOOLS) | workspace_tools


def skill_prompt_parts(skill: Skill, content: str, context: LoadedContext) -> PromptParts:
    return PromptParts(
        skill_name=skill.name,
        skill_content=content,
        available_files=context.available_files,
        skill_dir=str(context.skill_dir),
    )


@dataclass(frozen=True)
class PreparedSkill:
    """What a run of a skill needs: its prompt parts, the tools it may use (None: all the
    run's) and its tools (the run's, plus the skill's own `read` when the run offers none
    and the skill has supporting files), and its folder (readable by read-only tools)."""

    prompt_parts: PromptParts
    allowed_tools: tuple[str, ...] | None
    registry: ToolRegistry
    folder: Path


def prepare_skill_agent(
    skill_dir: str | Path,
    request: str,
    registry: ToolRegistry,
    *,
    allow_commands: bool = False,
    context_window: int | None = None,
    own_read: bool = True,
) -> PreparedSkill:
    """A run of the skill in `skill_dir` on `request`, with the run's tools `registry`.

    A SkillError (a usage error, before the run) when the skill is not valid, names a tool
    nobody knows, or (given the model's `context_window`) is too big for the model.
    `own_read=False` leaves out the skill's own `read` of its folder (runs recorded before
    it existed, `AgentOptions.revision` 1, rebuild the tools they had)."""
    skill = load_skill(skill_dir, known_tools=known_tool_names(registry))
    context = ContextLoader().load(skill)
    content = StringSubstitutor().substitute(
        skill.content, arguments=request, skill_dir=str(skill.path)
    )
    content = DynamicInjector(enabled=allow_commands).inject_sync(content, skill.path)
    parts = skill_prompt_parts(skill, content, context)
    check_fits(skill, parts, context_window)
    files = len(context.available_files)
    tools = with_skill_read(registry, skill.path, files) if own_read else registry
    return PreparedSkill(parts, skill_allowed_tools(skill, context, tools), tools, skill.path)


def _options(config: AutonomousConfig, allowed: tuple[str, ...] | None) -> AgentOptions:
    data = config.options.to_dict()
    data["max_iterations"] = config.options.max_iterations or config.max_iterations
    data["allowed_tools"] = list(allowed) if allowed is not None else None
    return AgentOptions.from_dict(data)
