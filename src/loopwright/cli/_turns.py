"""What `run` and `chat` share: the agent of `--agent`, a turn's spec, starting a turn (a
new run, or a follow-up `after` an ended run of the same conversation), and the lines said
when a run stops without an answer (interrupted, waiting for a decision)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loopwright.cli._agent_ref import checked_ref, load_agent
from loopwright.cli._shared import secrets_from_args
from loopwright.errors import ConfigurationError
from loopwright.store import RunStore

if TYPE_CHECKING:
    from loopwright.agent import AgentExecutor, ExecutionResult
    from loopwright.models import Model
    from loopwright.runtime import RunHandle, RunSpec, Runtime


def agent_from_args(args: argparse.Namespace) -> AgentExecutor[Any, Any] | None:
    """The agent `--agent` names, to run in this process (None: the run is built from its
    spec: the flags', or with --engine temporal the workers' agent, `workers_agent_spec`);
    --continue rebuilds a stopped run's spec."""
    ref = getattr(args, "agent", None)
    if not ref:
        return None
    if getattr(args, "continue_run", None):
        raise ConfigurationError(
            "--agent with --continue: a run of an agent built in Python is followed up with "
            "--after RUN_ID"
        )
    if on_temporal(args):  # the workers load it (loopwright worker --agent): not imported here
        checked_ref(ref)
        return None
    return load_agent(ref)


def on_temporal(args: argparse.Namespace) -> bool:
    """Do the command's new runs start on Temporal (as `runtime_from_args` decides)?"""
    named = getattr(args, "engine", None)
    return named == "temporal" or (named is None and bool(getattr(args, "temporal", None)))


def workers_agent_spec(args: argparse.Namespace, spec: RunSpec) -> RunSpec:
    """With --engine temporal, the spec of a run of `--agent`: the agent's reference, the
    request and the tenant, no more (the workers started with that --agent build the run
    from their own agent: its model, tools and options). Else `spec`."""
    from loopwright.runtime import RunSpec

    ref = getattr(args, "agent", None)
    if not ref or not on_temporal(args):
        return spec
    return RunSpec(request=spec.request, tenant=spec.tenant, agent=checked_ref(ref))


def absolute_model(model: str) -> str:
    """`scripted:FILE` with FILE made absolute, so `runs resume` works from any folder."""
    prefix, sep, name = model.partition(":")
    if prefix == "scripted" and sep and Path(name).is_file():
        return f"scripted:{Path(name).resolve()}"
    return model


def turn_spec(
    args: argparse.Namespace, store: RunStore, base: RunSpec, after: str | None
) -> RunSpec:
    """The spec of a turn: `base` (the command line's), or after a run started from a spec,
    that run's spec (its model, tools, workspace and options) with the new request and
    what the command line gave again (--model, --base-url, --tools, --workspace)."""
    from loopwright.models._local_spec import spec_with_threads
    from loopwright.runtime._spec import recorded_spec

    if after is None or base.agent is not None:  # the workers' agent: --agent names it again
        return base
    store.find_run(after, tenant=base.tenant)  # another tenant's run: not found
    before = recorded_spec(store.events(after))
    if before is None:  # started from code: the command line's agent
        return base
    spec = dataclasses.replace(
        before, request=base.request, tenant=base.tenant, after=None, fork_of=None
    )
    if args.model:
        spec = dataclasses.replace(spec, model=base.model, base_url=base.base_url)
    elif getattr(args, "threads", None) is not None:
        spec = dataclasses.replace(spec, model=spec_with_threads(spec.model, args.threads))
    if args.tools:
        spec = dataclasses.replace(spec, tools=base.tools)
    if args.workspace:
        spec = dataclasses.replace(spec, workspace=base.workspace)
    return spec


def start_turn(
    runtime: Runtime,
    args: argparse.Namespace,
    agent: AgentExecutor[Any, Any] | None,
    spec: RunSpec,
    after: str | None,
    *,
    model: Model | None = None,
) -> RunHandle:
    """Start one turn: `agent` (built in Python) on the spec's request, else the spec (the
    turn's: `turn_spec`); a
    follow-up of `after` when given (refused, before anything starts, for a run that is
    still running, interrupted, another tenant's or not there). `model`: the spec's, already
    resolved (a chat's turns share it)."""
    if agent is not None:
        return runtime.start_agent(agent, spec.request, tenant=spec.tenant, after=after)
    return runtime.start(spec, after=after, secrets=secrets_from_args(args), model=model)


def say_unfinished(result: ExecutionResult[Any], args: argparse.Namespace, flags: str) -> None:
    """A run that ended waiting for a decision: how to decide and go on, on stderr."""
    if result.status != "waiting":
        return
    again = f" --agent {args.agent}" if getattr(args, "agent", None) else ""
    for pending in result.pending_approvals:
        print(
            f"loopwright: run {result.run_id} waits for a decision on {pending.tool_name} "
            f"(gate {pending.gate_id}): `loopwright runs approve {pending.run_id} "
            f"{pending.gate_id}{flags} [--reject --reason ...]`, then `loopwright runs resume "
            f"{result.run_id}{again}{flags}`",
            file=sys.stderr,
        )
