"""Approval of agent tool calls: a policy says which calls wait for a person's decision.

`AgentExecutor(..., approve=...)` takes tool names and tool effects (`"destructive"`,
`"write"`, ...; `True` or `"*"` for every call), a callable on the call, or an
`ApprovalPolicy`. A call that needs approval goes through the run's gate effect
(`fx.gate`), the machinery of task gates: `confirmation_required`, then whoever decides
(the terminal, `--yes`, the dashboard, the HTTP API, `loopwright runs approve`), then
`gate_decision` with who decided and why. Only an approved call runs; a denied or
timed-out one becomes an observation for the model. The gate's request id is the run's and
the call's (`approval_request_id`, public values) with a part keyed with a secret of the
run's log (`EventLog.gate_id`): nobody can name a gate without reading the run's events. A
resumed run finds the ids its log recorded, so it serves decisions already made from it and
waits again at a gate that was still open.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from loopwright.effects import Effects, GateRequest, GateVerdict
from loopwright.errors import ConfigurationError
from loopwright.events import ConfirmationRequiredEvent, GateDecisionEvent
from loopwright.messages import ToolCall
from loopwright.prompts._turn_notes import summarize
from loopwright.run_context import ApprovalRule
from loopwright.tools import ToolRegistry
from loopwright.tools._tool import EFFECTS

DEFAULT_APPROVAL_TIMEOUT_S = 300.0
CallCheck = Callable[[ToolCall], bool]


@dataclass(frozen=True)
class ApprovalPolicy:
    """Which tool calls wait for approval: by tool name, by declared effect, or a check."""

    tools: frozenset[str] = frozenset()
    effects: frozenset[str] = frozenset()
    check: CallCheck | None = None
    every: bool = False
    names: tuple[str, ...] = field(default=())
    """The policy as the user gave it (names and effects), recorded for resume."""

    def needs(self, call: ToolCall, effect: str) -> bool:
        """Does `call`, of a tool declaring `effect` ("" for an unknown tool), wait?"""
        if self.every or call.name in self.tools or effect in self.effects:
            return True
        return self.check is not None and bool(self.check(call))


@dataclass(frozen=True)
class EitherRule:
    """A call waits when either rule says so (a sub-agent's own policy and its lead's)."""

    first: ApprovalRule
    second: ApprovalRule

    def needs(self, call: ToolCall, effect: str) -> bool:
        return self.first.needs(call, effect) or self.second.needs(call, effect)


def either(own: ApprovalRule | None, lead: ApprovalRule | None) -> ApprovalRule | None:
    """The rule of a sub-agent's run: its own policy, and its lead's."""
    if own is None or lead is None:
        return own or lead
    return EitherRule(own, lead)


ApproveSpec = bool | str | Iterable[str] | CallCheck | ApprovalPolicy | None


def approval_policy(
    approve: ApproveSpec, registry: ToolRegistry, nested: Iterable[str] = ()
) -> ApprovalPolicy | None:
    """The policy `approve=` describes; ConfigurationError for a name that is neither one of
    the agent's tools, nor one of its sub-agents' (`nested`), nor an effect."""
    if approve is None or approve is False:
        return None
    if isinstance(approve, ApprovalPolicy):
        return approve
    if approve is True:
        return ApprovalPolicy(every=True, names=("*",))
    if callable(approve) and not isinstance(approve, str):
        return ApprovalPolicy(check=approve)
    names = (approve,) if isinstance(approve, str) else tuple(approve)
    tools: set[str] = set()
    effects: set[str] = set()
    nested = set(nested)
    for name in names:
        if name == "*":
            return ApprovalPolicy(every=True, names=names)
        if name in registry or name in nested:
            tools.add(name)
        elif name in EFFECTS:
            effects.add(name)
        else:
            known = ", ".join([*registry.names(), *sorted(nested), *EFFECTS])
            raise ConfigurationError(
                f"approve: {name!r} is neither a tool of this agent (or of its sub-agents) "
                f"nor an effect (use one of: {known}, or *)"
            )
    return ApprovalPolicy(frozenset(tools), frozenset(effects), names=names)


def approval_request_id(run_id: str, call_id: str) -> str:
    """What names the gate of one tool call in every process of the run (its id is this
    and a secret part: `EventLog.gate_id`; a run recorded before gates had one used this
    as the id)."""
    return "approve_" + hashlib.sha256(f"{run_id}/{call_id}".encode()).hexdigest()[:12]


def gate_message(call: ToolCall) -> str:
    arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True, default=str)
    return f"Allow the agent to call {call.name} {summarize(arguments, 300)}?"


def refusal_text(call: ToolCall, verdict: GateVerdict) -> str:
    """The observation the model gets for a call that was not approved."""
    if verdict.outcome == "timed_out":
        return (
            f"The call to '{call.name}' was not run: nobody approved it in time. "
            "Do not retry it; finish with what you have, or say what is needed."
        )
    why = f" Reason given: {verdict.reason}." if verdict.reason else ""
    return (
        f"The call to '{call.name}' was not run: {verdict.decided_by or 'the reviewer'} "
        f"denied it.{why} Do not retry the same call; change your approach or finish."
    )


async def ask_approval(fx: Effects, call: ToolCall, timeout_s: float) -> GateVerdict:
    """`confirmation_required`, the gate effect, then `gate_decision` (with the reason)."""
    gate_id = fx.log.gate_id(approval_request_id(fx.log.run_id, call.id))
    request = GateRequest(gate_id, call.name, gate_message(call), timeout_s)
    # asked first, so a decision made as soon as confirmation_required is seen finds it open
    asked: asyncio.Future[GateVerdict] = asyncio.ensure_future(fx.gate(request))
    try:
        await asyncio.sleep(0)
        await fx.log.append(
            ConfirmationRequiredEvent(
                step=request.step,
                request_id=request.request_id,
                message=request.message,
                timeout_s=timeout_s,
            )
        )
        verdict = await asked
    except BaseException:
        asked.cancel()
        raise
    await fx.log.append(
        GateDecisionEvent(
            step=request.step,
            request_id=request.request_id,
            approved=verdict.approved,
            decided_by=verdict.decided_by,
            reason=verdict.reason,
        )
    )
    return verdict


def recorded_names(policy: ApprovalPolicy | None) -> list[Any]:
    return list(policy.names) if policy is not None else []
