"""`loopwright run`: run an agent on a request and show it live."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

from loopwright.agent import AgentOptions, ExecutionResult
from loopwright.cli._follow import View, show_run
from loopwright.cli._options import add_options
from loopwright.cli._output import CONFIG_EPILOG, print_json
from loopwright.cli._output import console as output_console
from loopwright.cli._run_options import RUN as RUN_OPTIONS
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
from loopwright.errors import ConfigurationError
from loopwright.models import on_model_phase
from loopwright.models._local_spec import spec_with_threads
from loopwright.runtime import RunSpec
from loopwright.runtime._follow import FollowUp, continue_spec
from loopwright.store import RunStore

DEFAULT_MODEL = "local"


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


def options_from_args(args: argparse.Namespace) -> AgentOptions:
    return AgentOptions(
        max_iterations=args.max_iterations,
        tier=args.tier,
        tool_mode=args.tool_mode,
        timeout_s=args.timeout,
        iteration_timeout_s=args.iteration_timeout,
        max_tokens_total=args.max_tokens_total,
        max_cost=args.max_cost,
        repetition_threshold=args.repetition_threshold,
        last_turn=args.last_turn,
        no_progress_limit=args.no_progress_limit,
        context_window=getattr(args, "context_window", None),
        approval_timeout_s=getattr(args, "approval_timeout", None) or 300.0,
    )


def _absolute_model(model: str) -> str:
    """`scripted:FILE` with FILE made absolute, so `runs resume` works from any folder."""
    prefix, sep, name = model.partition(":")
    if prefix == "scripted" and sep and Path(name).is_file():
        return f"scripted:{Path(name).resolve()}"
    return model


def _absolute_tool(spec: str) -> str:
    file, sep, function = spec.rpartition(":")
    if sep and file.endswith(".py") and Path(file).is_file():
        return f"{Path(file).resolve()}:{function}"
    return spec


def tools_from_args(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(_absolute_tool(t.strip()) for t in args.tools.split(",") if t.strip())


def spec_from_args(args: argparse.Namespace) -> RunSpec:
    """The run's spec, with paths made absolute: it is recorded so the run can be resumed."""
    if not args.request:
        raise ConfigurationError("loopwright run needs a request (or --continue RUN_ID)")
    return RunSpec(
        request=args.request,
        model=spec_with_threads(_absolute_model(args.model or DEFAULT_MODEL), args.threads),
        base_url=args.base_url,
        tools=tools_from_args(args),
        workspace=str(Path(args.workspace or ".").resolve()),
        tenant=args.tenant,
        options=options_from_args(args),
        **skill_fields(args),
    )


def follow_up_spec(args: argparse.Namespace, store: RunStore) -> RunSpec:
    """`--continue RUN_ID`: the stopped run's spec, a fresh budget, and what was given again."""
    given = FollowUp(
        note=args.request or "",
        options=options_from_args(args),
        model=spec_with_threads(_absolute_model(args.model), args.threads) if args.model else None,
        base_url=args.base_url,
        tools=tools_from_args(args) if args.tools else None,
        workspace=str(Path(args.workspace).resolve()) if args.workspace else None,
    )
    args.continue_run = whole_run_id(store, args.continue_run)
    spec = continue_spec(store, args.continue_run, given)[0]
    if args.threads is not None and not args.model:  # the stopped run's model, N threads
        spec = dataclasses.replace(spec, model=spec_with_threads(spec.model, args.threads))
    return spec


def skill_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The RunSpec fields for skills, MCP servers, commands and verification."""
    return {
        "skill": args.skill or None,
        "allow_skill_commands": bool(args.skill and args.allow_skill_commands),
        "mcp": tuple(args.mcp),
        "allow_commands": bool(getattr(args, "allow_commands", False)),
        "verify": getattr(args, "verify", None) or None,
        "output_schema": read_output_schema(args.output_schema) if args.output_schema else None,
        "approve": tuple(a.strip() for a in (args.approve or "").split(",") if a.strip()),
    }


def read_output_schema(path: str) -> dict[str, Any]:
    """`--output-schema FILE.json`: a JSON Schema, checked before the run starts."""
    from loopwright.agent._output import OutputSpec

    try:
        schema = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"--output-schema {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f":{exc.lineno}:{exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise ConfigurationError(f"--output-schema {path}{where}: not JSON ({exc})") from None
    except RecursionError:  # json gives up past ~1,000 levels; a schema may have 64
        raise ConfigurationError(
            f"--output-schema {path}: output schema cannot be used: it is nested too deeply "
            "to read (a schema may nest 64 levels)"
        ) from None
    if not isinstance(schema, dict):
        raise ConfigurationError(f"--output-schema {path}: a JSON Schema is an object")
    try:
        OutputSpec(schema)
    except ConfigurationError as exc:
        raise ConfigurationError(f"--output-schema {path}: {exc}") from None
    return schema


def run_command(args: argparse.Namespace) -> int:
    """Run (or follow up) an agent on `--engine`; every event is stored, then shown."""
    check_heartbeat(args)
    store = store_from_args(args)
    view: View | None = None
    try:
        spec = follow_up_spec(args, store) if args.continue_run else spec_from_args(args)
        structured = spec.output_schema is not None
        # with an output schema, stdout carries the value only: the live view goes to stderr
        view = live_view(args, output_console(stderr=True) if structured else None)
        result = asyncio.run(_run(spec, args, store, view))
    finally:
        if view is not None:
            view.close()
        store.close()
    if result.success and structured and not args.json:
        print_json(json.loads(result.answer or "null"))
    return 0 if result.success else 1


async def _run(
    spec: RunSpec, args: argparse.Namespace, store: RunStore, view: View
) -> ExecutionResult:
    runtime = runtime_from_args(args, store)
    shows_phases = getattr(view, "model_phase", None)  # the live view: "loading the model"
    if shows_phases is not None:
        on_model_phase(shows_phases)
    try:
        handle = runtime.start(
            spec, parent_run_id=args.continue_run, secrets=secrets_from_args(args)
        )
        await show_run(
            runtime, handle.run_id, view, decide=terminal_decider(args, runtime),
            flags=reach_flags(args),
        )  # fmt: skip
        result: ExecutionResult = await handle.wait()
        return result
    finally:
        on_model_phase(None)
        runtime.close()
