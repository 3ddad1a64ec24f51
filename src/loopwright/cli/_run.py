"""`loopwright run`: run an agent on a request and show it live."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

from loopwright.agent import AgentExecutor, ExecutionResult
from loopwright.cli._follow import View, show_run
from loopwright.cli._options import add_options
from loopwright.cli._output import CONFIG_EPILOG, print_json
from loopwright.cli._output import console as output_console
from loopwright.cli._run_options import RUN as RUN_OPTIONS
from loopwright.cli._run_spec import options_from_args, spec_from_args, tools_from_args
from loopwright.cli._shared import (
    check_heartbeat,
    live_view,
    reach_flags,
    runtime_from_args,
    secrets_from_args,
    store_from_args,
    terminal_decider,
    whole_run_id,
)
from loopwright.cli._turns import (
    absolute_model,
    agent_from_args,
    say_unfinished,
    start_turn,
    turn_spec,
    workers_agent_spec,
)
from loopwright.errors import ConfigurationError
from loopwright.models import on_model_phase
from loopwright.models._local_spec import spec_with_threads
from loopwright.runtime import RunSpec
from loopwright.runtime._follow import FollowUp, continue_spec
from loopwright.store import RunStore


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "run",
        help="run an agent on a request",
        description="Run an agent on a request and show it live (or --json events).",
        epilog=CONFIG_EPILOG.format(section="run"),
    )
    parser.add_argument(
        "request",
        nargs="?",
        default=None,
        help="what the agent should do; with --continue, a note (default: none)",
    )
    add_options(parser, RUN_OPTIONS, "run")
    parser.set_defaults(handler=run_command)


def follow_up_spec(args: argparse.Namespace, store: RunStore) -> RunSpec:
    """`--continue RUN_ID`: the stopped run's spec, a fresh budget, and what was given again."""
    given = FollowUp(
        note=args.request or "",
        options=options_from_args(args),
        model=spec_with_threads(absolute_model(args.model), args.threads) if args.model else None,
        base_url=args.base_url,
        tools=tools_from_args(args) if args.tools else None,
        workspace=str(Path(args.workspace).resolve()) if args.workspace else None,
    )
    args.continue_run = whole_run_id(store, args.continue_run)
    spec = continue_spec(store, args.continue_run, given)[0]
    if args.threads is not None and not args.model:  # the stopped run's model, N threads
        spec = dataclasses.replace(spec, model=spec_with_threads(spec.model, args.threads))
    return spec


def run_command(args: argparse.Namespace) -> int:
    """Run (or follow up) an agent on `--engine`; every event is stored, then shown."""
    check_heartbeat(args)
    agent = agent_from_args(args)
    if args.after and args.continue_run:
        raise ConfigurationError(
            "--after and --continue: --after continues a conversation, --continue a stopped "
            "run's remaining work; give one"
        )
    store = store_from_args(args)
    view: View | None = None
    try:
        after = whole_run_id(store, args.after) if args.after else None
        if args.continue_run:
            spec = follow_up_spec(args, store)
        else:  # with --agent on Temporal: the workers' agent, by its reference
            spec = workers_agent_spec(args, spec_from_args(args))
        structured = spec.output_schema is not None and agent is None
        # with an output schema, stdout carries the value only: the live view goes to stderr
        view = live_view(args, output_console(stderr=True) if structured else None)
        result = asyncio.run(_run(spec, args, store, view, agent, after))
    finally:
        if view is not None:
            view.close()
        store.close()
    say_unfinished(result, args, reach_flags(args))
    if result.success and structured and not args.json:
        print_json(json.loads(result.answer or "null"))
    return 0 if result.success else 1


async def _run(
    spec: RunSpec,
    args: argparse.Namespace,
    store: RunStore,
    view: View,
    agent: AgentExecutor[Any, Any] | None,
    after: str | None,
) -> ExecutionResult:
    runtime = runtime_from_args(args, store)
    shows_phases = getattr(view, "model_phase", None)  # the live view: "loading the model"
    if shows_phases is not None:
        on_model_phase(shows_phases)
    try:
        if args.continue_run:
            handle = runtime.start(
                spec, parent_run_id=args.continue_run, secrets=secrets_from_args(args)
            )
        else:
            spec = spec if agent is not None else turn_spec(args, store, spec, after)
            handle = start_turn(runtime, args, agent, spec, after)
        await show_run(
            runtime, handle.run_id, view, decide=terminal_decider(args, runtime),
            flags=reach_flags(args),
        )  # fmt: skip
        result: ExecutionResult = await handle.wait()
        return result
    finally:
        on_model_phase(None)
        runtime.close()
