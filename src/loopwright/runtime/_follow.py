"""Follow-ups from stored runs: `loopwright run --continue RUN_ID`.

A stopped run is not resumed (it ended for a reason); a new run, linked to it by
`parent_run_id`, is given the remaining work (`agent.follow_up_request`) and a fresh budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from loopwright.agent import (
    AgentOptions,
    CompletedStep,
    ExecutionResult,
    VerificationResult,
    follow_up_request,
)
from loopwright.errors import UsageError
from loopwright.events import (
    Event,
    ModelResponseEvent,
    RunFinishedEvent,
    RunStoppedEvent,
    ToolCallEvent,
    VerificationEvent,
)
from loopwright.messages import Usage
from loopwright.runtime._spec import RunSpec, recorded_spec
from loopwright.store import RunStore
from loopwright.store._base import find_run

CONTINUABLE = ("stopped", "failed", "cancelled")


@dataclass(frozen=True)
class FollowUp:
    """What the user gave again for a follow-up run; None: the stopped run's."""

    note: str = ""
    """Added to the follow-up request ("Also: ...")."""
    options: AgentOptions | None = None
    model: str | None = None
    base_url: str | None = None
    """With `model` only: the new model's server (None: its provider's default)."""
    tools: tuple[str, ...] | None = None
    workspace: str | None = None


def stored_result(events: Sequence[Event]) -> ExecutionResult:
    """The ExecutionResult of a finished run, rebuilt from its events."""
    run_id = events[0].run_id if events else ""
    steps: list[CompletedStep] = []
    fields: dict[str, Any] = {}
    for event in events:
        if isinstance(event, ToolCallEvent):
            steps.append(
                CompletedStep(
                    event.iteration_number,
                    event.tool_name,
                    event.arguments,
                    event.result,
                    event.is_error,
                )
            )
        elif isinstance(event, ModelResponseEvent) and event.thought:
            fields["last_thought"] = event.thought
        elif isinstance(event, RunStoppedEvent):
            fields["message"] = event.message
        elif isinstance(event, VerificationEvent):
            fields["verification"] = VerificationResult(
                event.outcome, tuple(event.passed), tuple(event.failed), event.output
            )
        elif isinstance(event, RunFinishedEvent):
            partial = event.partial or {}
            fields.update(
                status=event.status,
                answer=event.answer,
                reason=event.reason,
                usage=Usage.from_dict(event.usage),
                cost=event.cost,
                modified_files=tuple(partial.get("modified_files") or ()),
            )
    fields.setdefault("status", "failed")
    return ExecutionResult(run_id=run_id, steps=tuple(steps), **fields)


def continue_spec(store: RunStore, run_id: str, given: FollowUp) -> tuple[RunSpec, str]:
    """The spec of a follow-up to the stored run `run_id`, and the follow-up request.

    `given` holds what the user gave again (model, tools, options...); the rest is the
    stopped run's. Its `note` is added to the request.
    """
    record = find_run(store, run_id)
    if record.kind != "agent":
        raise UsageError(f"run {run_id} is a task run: only agent runs can be continued")
    if record.status not in CONTINUABLE:
        hint = (
            f"resume it with: loopwright runs resume {run_id}"
            if record.status in ("interrupted", "running")
            else "it completed"
        )
        raise UsageError(f"run {run_id} is {record.status}, not stopped: {hint}")
    events = store.events(run_id)
    spec = recorded_spec(events)
    if spec is None:
        raise UsageError(f"run {run_id} has no recorded RunSpec: continue it from code")
    request = follow_up_request(stored_result(events), spec.request)
    if given.note:
        request += f"\n\nAlso: {given.note}"
    # a new run, not a fork (a fork's steps are in the run's own log); in the same
    # conversation when the stopped run was a follow-up
    spec = dataclasses.replace(spec, request=request, tenant=record.tenant, fork_of=None)
    if given.options is not None:
        spec = dataclasses.replace(spec, options=given.options)
    if given.model is not None:
        spec = dataclasses.replace(spec, model=given.model, base_url=given.base_url)
    if given.tools is not None:
        spec = dataclasses.replace(spec, tools=given.tools)
    if given.workspace is not None:
        spec = dataclasses.replace(spec, workspace=given.workspace)
    return spec, request
