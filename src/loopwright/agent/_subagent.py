"""Sub-agents: `agent.as_tool(name, description)` lets one agent call another.

A call of the tool is a run of its own: its id is derived from the parent's run id and the
tool call's id (the same in every process of the parent), its `run_started` carries
`parent_run_id` and `parent_call_id`, and its events go where the parent's go (the same
store writer and subscriber), so the store, the CLI and the dashboard see it as a run
nested under the call. Its tokens and cost are added to the parent's ledger (its budget
is what the parent has left), its approvals go to the parent's gatekeeper, and cancelling
the parent cancels it (it runs inside the parent's tool call). The tool is idempotent:
when the parent resumes with the call started but not finished, the child run is resumed
from its own recorded events, so what it finished is not done again.
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loopwright.effects import (
    Effects,
    EventLog,
    EventSink,
    Gatekeeper,
    LiveEffects,
    replaying,
)
from loopwright.errors import ToolError
from loopwright.events import Event
from loopwright.guards import CostLedger
from loopwright.tools import Tool

if TYPE_CHECKING:
    from loopwright.agent._executor import AgentExecutor

DEFAULT_MAX_DEPTH = 3
SUBAGENT_TIMEOUT_S = 3600.0
"""A sub-agent call's own limit (its run's wall clock and the parent's still apply)."""


@dataclass(frozen=True)
class RunScope:
    """What a running agent offers the sub-agents its tools start."""

    run_id: str
    tenant: str
    depth: int
    ledger: CostLedger
    max_tokens_total: int | None
    max_cost: float | None
    sink: EventSink | None
    recorder: Any
    gates: Gatekeeper | None
    recorded: Sequence[Event]
    """Every recorded event the run was resumed with (its sub-agents' too)."""

    def recorded_for(self, run_id: str) -> list[Event]:
        """A child's own recorded events: from the given events, else from the store."""
        own = [e for e in self.recorded if e.run_id == run_id]
        store = getattr(self.recorder, "store", None)
        if not own and store is not None:
            own = list(store.events(run_id))
        return own


CURRENT_SCOPE: contextvars.ContextVar[RunScope | None] = contextvars.ContextVar(
    "loopwright_run_scope", default=None
)
CURRENT_CALL: contextvars.ContextVar[str] = contextvars.ContextVar(
    "loopwright_tool_call", default=""
)
"""The id of the tool call being run (set by the loop before each call)."""
LEASES: contextvars.ContextVar[Any] = contextvars.ContextVar("loopwright_leases", default=None)
"""The Runtime's LeaseKeeper, when the run is one of a Runtime's: a child run holds its
lease while it runs (so other processes see it running, and follow it live)."""
RECORDED: contextvars.ContextVar[Sequence[Event]] = contextvars.ContextVar(
    "loopwright_recorded", default=()
)


def scope_for(fx: Effects, run_id: str, tenant: str, options: Any, ledger: CostLedger) -> RunScope:
    parent = CURRENT_SCOPE.get()
    log = fx.log
    gates = getattr(getattr(fx, "live", fx), "gates", None)
    return RunScope(
        run_id=run_id,
        tenant=tenant,
        depth=0 if parent is None else parent.depth + 1,
        ledger=ledger,
        max_tokens_total=options.max_tokens_total,
        max_cost=options.max_cost,
        sink=log.sink,
        recorder=log.recorder,
        gates=gates,
        recorded=RECORDED.get() or log.recorded,
    )


def child_run_id(parent_run_id: str, call_id: str) -> str:
    return "run_" + hashlib.sha256(f"{parent_run_id}/{call_id}".encode()).hexdigest()[:16]


def subagent_run_id(registry: Any, run_id: str, call_id: str, name: str) -> str | None:
    """The run a call of a sub-agent tool starts (None for any other tool)."""
    if name not in registry or not getattr(registry.get(name).function, "subagent", False):
        return None
    return child_run_id(run_id, call_id)


def _effect_of(agent: AgentExecutor) -> str:
    effects = {t.effect for t in agent.tools}
    for effect in ("destructive", "unknown", "write"):
        if effect in effects:
            return effect
    return "read"


def _budgeted(agent: AgentExecutor, scope: RunScope) -> AgentExecutor:
    """The child with the parent's remaining token and cost budget (never more)."""
    options = agent.options
    changes: dict[str, Any] = {}
    if scope.max_tokens_total is not None:
        used = scope.ledger.total_usage
        left = max(1, scope.max_tokens_total - used.input_tokens - used.output_tokens)
        changes["max_tokens_total"] = min(options.max_tokens_total or left, left)
    if scope.max_cost is not None:
        left_cost = max(0.0, scope.max_cost - scope.ledger.total_cost)
        changes["max_cost"] = min(options.max_cost or left_cost, left_cost)
    if not changes:
        return agent
    child = copy.copy(agent)
    child.options = dataclasses.replace(options, **changes)
    return child


def _child_effects(agent: AgentExecutor, scope: RunScope, run_id: str) -> Effects:
    recorded = scope.recorded_for(run_id)
    log = EventLog(
        run_id,
        clock=agent.clock,
        scrubber=agent.scrubber,
        sink=scope.sink,
        recorder=scope.recorder,
        recorded=recorded,
    )
    live = LiveEffects(log, clock=agent.clock, gates=scope.gates)
    return replaying(live, recorded)


async def _run_child(child: AgentExecutor, setup: Any, fx: Effects) -> Any:
    leases = LEASES.get()
    if leases is None:
        return await child.run_with(fx, setup)
    leases.hold(setup.run_id)
    try:
        return await child.run_with(fx, setup)
    finally:
        await fx.log.flush()  # its end is stored before the lease is let go
        leases.release(setup.run_id)


def as_tool(
    agent: AgentExecutor, name: str, description: str, *, max_depth: int = DEFAULT_MAX_DEPTH
) -> Tool:
    """A tool that runs `agent` on a request as a sub-agent run of the calling run."""

    async def run_subagent(request: str) -> str:
        scope = CURRENT_SCOPE.get()
        depth = 0 if scope is None else scope.depth + 1
        if depth >= max_depth:
            raise ToolError(
                f"sub-agent '{name}' was not started: runs may nest {max_depth} deep at most"
            )
        if scope is None:  # called outside a run: a run of its own
            result = await agent.run(request)
        else:
            call_id = CURRENT_CALL.get()
            run_id = child_run_id(scope.run_id, call_id)
            child = _budgeted(agent, scope)
            recorded = scope.recorded_for(run_id)
            setup = child.setup(
                request,
                run_id,
                tenant=scope.tenant,
                parent_run_id=scope.run_id,
                parent_call_id=call_id,
                recorded=recorded,
            )
            result = await _run_child(child, setup, _child_effects(child, scope, run_id))
            scope.ledger.record(agent.model.name, result.usage)
        if not result.success:
            why = result.message or result.reason or result.status
            raise ToolError(f"sub-agent '{name}' ended {result.status}: {why}")
        if result.output is not None:
            return json.dumps(json.loads(result.answer or "null"), ensure_ascii=False)
        return result.answer or ""

    run_subagent.subagent = True  # type: ignore[attr-defined]
    run_subagent.__doc__ = f"""{description}

    Args:
        request: what the sub-agent should do, in full (it sees nothing else)
    """
    return Tool.from_function(
        run_subagent,
        name=name,
        description=description,
        effect=_effect_of(agent),  # type: ignore[arg-type]
        idempotent=True,  # a resumed call continues the child run from its own log
        timeout=SUBAGENT_TIMEOUT_S,
    )
