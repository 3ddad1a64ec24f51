"""Follow-ups and forks over HTTP: `POST /api/runs` with `after`, `POST /api/runs/{id}/fork`,
and the lineage a run's page shows (its conversation's turns, the run it forks).

A follow-up or a fork runs the agent of the run it comes from (its recorded RunSpec, when
the request names no agent of its own) only when this server would run that agent for a
request: its tools offered, its model allowed, nothing an API request cannot name (MCP
servers, a skill, commands, a verify command, another workspace). A server given an agent
built in code (`serve --agent`) runs that agent for every agent run it starts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Sequence
from typing import Any

from loopwright.errors import (
    ConfigurationError,
    FollowUpError,
    ForkError,
    RunNotFound,
    UsageError,
)
from loopwright.events import Event, IterationStartedEvent, RunStartedEvent
from loopwright.runtime import RunHandle, RunSpec
from loopwright.runtime._spec import recorded_spec
from loopwright.server._config import ServerConfig
from loopwright.server._http import ApiError
from loopwright.server._validate import AgentRequest
from loopwright.store import RunRecord

WAITING_TO_END = ("queued", "running")


@contextlib.contextmanager
def link_errors(field: str) -> Iterator[None]:
    """The Runtime's refusals of a follow-up or a fork as the API's: the run is not there
    (or another tenant's) 404, it has not ended 409, a step it does not have 422."""
    try:
        yield
    except RunNotFound as exc:
        raise ApiError(404, f"no run {exc.run_id!r}", field=field) from None
    except FollowUpError as exc:
        raise ApiError(409, str(exc), field=field) from None
    except ForkError as exc:
        raise ApiError(422, str(exc), field="at") from None
    except ConfigurationError as exc:  # the engine cannot run it (its model, an option)
        raise ApiError(422, str(exc)) from None


def owned(config: ServerConfig, run_id: str, tenant: str, field: str) -> RunRecord:
    """The caller's run `run_id`, or a 404 naming `field` (also for another tenant's)."""
    record = config.runtime.store.get_run(run_id, tenant=tenant)
    if record is None:
        raise ApiError(404, f"no run {run_id!r}", field=field)
    return record


def check_offered(spec: RunSpec, config: ServerConfig, run_id: str) -> None:
    """A 422 unless this server would run `spec`'s agent for an API request (the agent a
    follow-up or a fork of run `run_id` takes from its log)."""
    refused = [
        name
        for name, used in (
            ("MCP servers", spec.mcp),
            ("a skill", spec.skill),
            ("program commands", spec.allow_commands),
            ("a verify command", spec.verify),
        )
        if used
    ]
    refused += [f"tool {name!r}" for name in spec.tools if name not in config.allowed_tools]
    if spec.agent is not None and spec.agent != config.workers_agent:
        refused.append(f"the agent {spec.agent!r} (serve --agent)")
    if spec.base_url is not None and not config.allow_base_url:
        refused.append("a model base_url")
    if not config.model_allowed(spec.model):
        refused.append(f"model {spec.model!r}")
    if _elsewhere(spec.workspace, config.workspace):
        refused.append("another workspace folder")
    if refused:
        raise ApiError(
            422,
            f"run {run_id}'s agent uses what this server does not offer ({', '.join(refused)}): "
            "name the agent in the request (model, tools)",
        )


def _elsewhere(folder: str | None, workspace: str | None) -> bool:
    if folder is None or workspace is None:
        return False
    return os.path.realpath(folder) != os.path.realpath(workspace)


def start_agent_run(config: ServerConfig, parsed: AgentRequest, tenant: str) -> RunHandle:
    """Start the agent run a `POST /api/runs` asks for: the server's own agent (`serve
    --agent`), the agent of the run it follows up, or the one its fields name."""
    runtime = config.runtime
    spec = dataclasses.replace(parsed.spec, tenant=tenant)
    after = spec.after
    if after is not None and owned(config, after, tenant, "after").kind != "agent":
        message = f"run {after} is a task run: only an agent run can be followed up"
        raise ApiError(409, message, field="after")
    if config.agent is not None or config.workers_agent is not None:
        if parsed.names_agent:
            raise ApiError(
                422,
                "this server runs its own agent (serve --agent): give only 'request' "
                "(and 'after'), not model, tools, options, approve, output_schema, base_url",
            )
        with link_errors("after"):
            if config.agent is None:  # the workers' agent (Temporal), by its reference
                ours = RunSpec(request=spec.request, tenant=tenant, agent=config.workers_agent)
                return runtime.start(ours, after=after)
            return runtime.start_agent(config.agent, spec.request, tenant=tenant, after=after)
    if after is not None and not parsed.names_agent:
        spec = _follow_up_spec(config, spec, after, tenant)
    with link_errors("after"):
        return runtime.start(spec)


def _follow_up_spec(config: ServerConfig, spec: RunSpec, after: str, tenant: str) -> RunSpec:
    """A follow-up that names no agent: the agent of the turn before (its recorded spec),
    if this server offers it; a turn started from code: the server's defaults."""
    events = config.runtime.store.events(after, after=0)[:1]
    before = recorded_spec(events)
    if before is None:
        return spec
    check_offered(before, config, after)
    return dataclasses.replace(before, request=spec.request, after=after, fork_of=None,
                               tenant=tenant)  # fmt: skip


def lineage_view(
    config: ServerConfig, record: RunRecord, events: Sequence[Event]
) -> dict[str, Any]:
    """What a run's page shows of its lineage: the turns of its conversation (oldest
    first; one turn when it is none), the run and step it forks, its number of steps."""
    turns = config.runtime.turns(record.run_id, tenant=record.tenant)
    started = events[0] if events else None
    fork_of = started.fork_of if isinstance(started, RunStartedEvent) else None
    return {
        "turns": [
            {"run_id": t.run_id, "request": t.request, "status": t.status, "answer": t.answer}
            for t in turns
        ],
        "fork_of": fork_of,
        "steps": max(
            (e.iteration_number for e in events if isinstance(e, IterationStartedEvent)), default=0
        ),
    }


async def resume_here(config: ServerConfig, record: RunRecord) -> RunHandle:
    """Go on with an interrupted run, or one that ended `waiting` (its gates decided): from
    its RunSpec, or a run of an agent built in code with the server's agent (`serve
    --agent`); a UsageError naming what to do when this server has none."""
    runtime = config.runtime
    events = runtime.store.events(record.run_id, after=0)[:1]
    if record.kind == "task" or recorded_spec(events) is not None:
        return await runtime.resume(record.run_id, tenant=record.tenant)
    if config.agent is None:
        raise UsageError(
            f"run {record.run_id} runs an agent built in code: resume it from that code "
            "(Runtime.resume_agent), or serve with --agent MODULE:ATTRIBUTE to resume it here"
        )
    return await runtime.resume_agent(config.agent, record.run_id, tenant=record.tenant)
