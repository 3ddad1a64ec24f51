"""Sub-agents: `agent.as_tool(name, description)` lets one agent call another.

A call of the tool is a run of its own: its id is derived from the lead's run id and the
tool call's id (the same in every process of the lead), its `run_started` carries
`parent_run_id` and `parent_call_id`, and its events go where the lead's go (the same
store writer and subscriber), so the store, the CLI and the dashboard see it as a run
nested under the call.

Its `RunContext` is derived from the lead's, which the tool gets through its
`ToolContext`: it works in the lead's workspace, its tools get the lead's deps, its
approvals go to the lead's gatekeeper (and the lead's approval policy covers its calls
too; a lead that ends `waiting` at a gate does so at a sub-agent's gate too), its events
are scrubbed
with the lead's scrubber, its tokens and cost are added to the lead's ledger (its budget is
what the lead has left), and cancelling the lead cancels it (it runs inside the lead's
tool call). The tool is idempotent: when the lead resumes with the call started but not
finished, the child run is resumed from its own recorded events, so what it finished is
not done again.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from loopwright.agent._approval import either
from loopwright.agent._result import ExecutionResult
from loopwright.agent._setup import RunSetup
from loopwright.effects import Effects
from loopwright.effects._log import EventSink
from loopwright.errors import ToolError
from loopwright.events import Event
from loopwright.events._types import child_run_id
from loopwright.models import Model
from loopwright.run_context import RunContext
from loopwright.safety.scrub import Scrubber
from loopwright.tools import Tool, ToolContext, ToolRegistry

DEFAULT_MAX_DEPTH = 3
Limit = TypeVar("Limit", int, float)
SUBAGENT_TIMEOUT_S = 3600.0
"""A sub-agent call's own limit (its run's wall clock and the lead's still apply)."""


class SubAgent(Protocol):
    """What a sub-agent tool uses of the agent it runs (an `AgentExecutor`)."""

    model: Model
    tools: ToolRegistry
    deps_type: Any
    """The deps its tools read: it gets its lead's run's (checked when the lead is made)."""

    def run_context(self, run_id: str) -> RunContext: ...

    def setup(self, request: str, context: RunContext) -> RunSetup: ...

    def effects(self, context: RunContext) -> Effects: ...

    async def run_with(self, fx: Effects, setup: RunSetup) -> ExecutionResult: ...

    async def run(self, request: str) -> ExecutionResult: ...


def subagent_run_id(registry: ToolRegistry, run_id: str, call_id: str, name: str) -> str | None:
    """The run a call of a sub-agent tool starts (None for any other tool)."""
    return child_run_id(run_id, call_id) if isinstance(registry.find(name), SubagentTool) else None


def nested_tool_names(registry: ToolRegistry) -> list[str]:
    """The names of the tools of the registry's sub-agents (and theirs), which a lead's
    approval policy may name."""
    names: list[str] = []
    for tool in registry:
        if isinstance(tool, SubagentTool):
            names += [*tool.agent.tools.names(), *nested_tool_names(tool.agent.tools)]
    return names


def _at_most(own: Limit | None, left: Limit | None) -> Limit | None:
    """The sub-agent's own limit, never more than what its lead has left."""
    if left is None:
        return own
    return left if own is None else min(own, left)


def _scrubber(lead: Scrubber | None, own: Scrubber | None) -> Scrubber | None:
    """The lead's scrubber, also catching the exact secrets the sub-agent's own holds."""
    if lead is None or own is None:
        return lead or own
    extra = set(own.secrets) - set(lead.secrets)
    return lead.with_secrets(sorted(extra)) if extra else lead


def _recorded(lead: RunContext, run_id: str) -> tuple[Event, ...]:
    """What the child starts from: the lead's recorded events, with the child's own from the
    store when they are not among them (a resumed lead; a call tried again on a Temporal
    worker, whose tool context records nothing of the lead)."""
    if any(e.run_id == run_id for e in lead.recorded):
        return lead.recorded
    own = lead.recorded_for(run_id)
    return (*lead.recorded, *own) if own else lead.recorded


def child_context(agent: SubAgent, lead: RunContext, call_id: str) -> RunContext:
    """The context of the sub-agent run the lead's call `call_id` starts: the lead's (its
    workspace, gatekeeper, scrubber, sink, store, approval timeout), with the sub-agent's
    own ledger and readable folders, its own approval policy besides the lead's, and the
    budget the lead has left."""
    run_id = child_run_id(lead.run_id, call_id)
    own = agent.run_context(run_id)
    return dataclasses.replace(
        lead,
        run_id=run_id,
        parent_run_id=lead.run_id,
        parent_call_id=call_id,
        depth=lead.depth + 1,
        readable_roots=own.readable_roots,
        scrubber=_scrubber(lead.scrubber, own.scrubber),
        approval=either(own.approval, lead.approval),
        ledger=own.ledger,
        max_tokens_total=_at_most(own.max_tokens_total, lead.tokens_left()),
        max_cost=_at_most(own.max_cost, lead.cost_left()),
        recorded=_recorded(lead, run_id),
    )


def _effect_of(agent: SubAgent) -> str:
    effects = {t.effect for t in agent.tools}
    for effect in ("destructive", "unknown", "write"):
        if effect in effects:
            return effect
    return "read"


async def run_child(
    agent: SubAgent,
    request: str,
    lead: RunContext,
    call_id: str,
    *,
    sink: EventSink | None = None,
) -> ExecutionResult:
    """Run `agent` on `request` as the run that the lead's call `call_id` starts: its
    context derived from the lead's (`child_context`), under a lease of its own when the
    lead has leases, its events to `sink` when given (else where the lead's go). A
    sub-agent tool's call is one; a task's agent step is one (its lead: the task run)."""
    context = child_context(agent, lead, call_id)
    if sink is not None:
        context = dataclasses.replace(context, sink=sink)
    return await _run_child(agent, agent.setup(request, context), context)


async def _run_child(agent: SubAgent, setup: RunSetup, context: RunContext) -> ExecutionResult:
    fx = agent.effects(context)
    leases = context.leases
    if leases is None:
        return await agent.run_with(fx, setup)
    leases.hold(setup.run_id)
    try:
        return await agent.run_with(fx, setup)
    finally:
        await fx.log.flush()  # its end is stored before the lease is let go
        leases.release(setup.run_id)


@dataclass(frozen=True)
class SubagentTool(Tool):
    """A tool whose every call is a run of `agent` (`AgentExecutor.as_tool`)."""

    agent: SubAgent = field(kw_only=True)
    max_depth: int = DEFAULT_MAX_DEPTH

    @property
    def takes_context(self) -> bool:
        return True  # the lead's run context, and the call's id

    def start(self, arguments: dict[str, Any], ctx: ToolContext[Any]) -> Awaitable[str]:
        return self.invoke(arguments, ctx)

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext[Any]) -> str:
        """Run the sub-agent on `arguments["request"]`, as a run under `ctx.run` (a run of
        its own when the call is made outside a run)."""
        agent, request, lead = self.agent, str(arguments["request"]), ctx.run
        if lead is None:
            return _answer(self.name, await agent.run(request))
        if lead.depth + 1 >= self.max_depth:
            raise ToolError(
                f"sub-agent '{self.name}' was not started: "
                f"runs may nest {self.max_depth} deep at most"
            )
        result = await run_child(agent, request, lead, ctx.call_id)
        lead.ledger.record(agent.model.name, result.usage)
        return _answer(self.name, result)


def _answer(name: str, result: ExecutionResult) -> str:
    """The sub-agent's answer for the lead (its JSON with an output type); ToolError when
    it did not complete."""
    if not result.success:
        why = result.message or result.reason or result.status
        raise ToolError(f"sub-agent '{name}' ended {result.status}: {why}")
    if result.output is not None:
        return json.dumps(json.loads(result.answer or "null"), ensure_ascii=False)
    return result.answer or ""


def as_tool(
    agent: SubAgent, name: str, description: str, *, max_depth: int = DEFAULT_MAX_DEPTH
) -> SubagentTool:
    """A tool that runs `agent` on a request as a sub-agent run of the calling run."""

    async def run_subagent(request: str) -> str:  # called directly: a run of its own
        return _answer(name, await agent.run(request))

    run_subagent.__doc__ = f"""{description}

    Args:
        request: what the sub-agent should do, in full (it sees nothing else)
    """
    schema = Tool.from_function(run_subagent, name=name, description=description)
    return SubagentTool(
        name=schema.name,
        description=schema.description,
        parameters=schema.parameters,
        function=run_subagent,
        effect=_effect_of(agent),  # type: ignore[arg-type]
        idempotent=True,  # a resumed call continues the child run from its own log
        timeout=SUBAGENT_TIMEOUT_S,
        agent=agent,
        max_depth=max_depth,
    )


__all__ = [
    "DEFAULT_MAX_DEPTH",
    "SubAgent",
    "SubagentTool",
    "as_tool",
    "child_context",
    "child_run_id",
    "nested_tool_names",
    "run_child",
    "subagent_run_id",
]
