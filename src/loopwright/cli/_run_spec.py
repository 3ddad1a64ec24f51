"""The spec of a run from the command line's options (`run`, `chat`): what `run_started`
records, with paths made absolute so the run can be resumed from any folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from loopwright.agent import AgentOptions
from loopwright.cli._turns import absolute_model
from loopwright.errors import ConfigurationError
from loopwright.models._local_spec import spec_with_threads
from loopwright.runtime import RunSpec

DEFAULT_MODEL = "local"


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


def _absolute_tool(spec: str) -> str:
    file, sep, function = spec.rpartition(":")
    if sep and file.endswith(".py") and Path(file).is_file():
        return f"{Path(file).resolve()}:{function}"
    return spec


def tools_from_args(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(_absolute_tool(t.strip()) for t in args.tools.split(",") if t.strip())


def spec_from_args(args: argparse.Namespace, request: str | None = None) -> RunSpec:
    """The run's spec, with paths made absolute: it is recorded so the run can be resumed.
    `request`: a chat's line (by default the command's request)."""
    request = request if request is not None else args.request
    if not request:
        raise ConfigurationError("loopwright run needs a request (or --continue RUN_ID)")
    return RunSpec(
        request=request,
        model=spec_with_threads(absolute_model(args.model or DEFAULT_MODEL), args.threads),
        base_url=args.base_url,
        tools=tools_from_args(args),
        workspace=str(Path(args.workspace or ".").resolve()),
        tenant=args.tenant,
        options=options_from_args(args),
        **skill_fields(args),
    )


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
