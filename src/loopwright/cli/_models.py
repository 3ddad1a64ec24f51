"""`loopwright models`: which model backends are configured, and which servers answer."""

from __future__ import annotations

import argparse
import asyncio
import json

from loopwright.cli._options import add_options, opt
from loopwright.models._status import BackendStatus, backend_statuses


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "models", help="list the model backends: configured? reachable? (never prints keys)"
    )
    add_options(
        parser,
        [
            opt(
                "--timeout", help="seconds per server check", group="model", type=float, default=2.0
            ),
            opt(
                "--ollama-url",
                help="Ollama server",
                group="model",
                default_text="$OLLAMA_HOST or http://localhost:11434",
            ),
            opt(
                "--openai-url",
                help="OpenAI-compatible server",
                group="model",
                default_text="$OPENAI_BASE_URL or OpenAI's",
            ),
            opt(
                "--anthropic-url",
                help="Anthropic server",
                group="model",
                default_text="$ANTHROPIC_BASE_URL or Anthropic's",
            ),
            opt(
                "--json",
                help="print one JSON object per backend, one a line",
                group="output",
                action="store_true",
            ),
        ],
        None,
    )
    parser.set_defaults(handler=models_command)


def _mark(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


def _line(status: BackendStatus) -> str:
    where = f"{status.url}: " if status.url else ""
    reach = status.reach_detail
    if status.models:
        shown = ", ".join(status.models[:8]) + (" ..." if len(status.models) > 8 else "")
        reach = f"{reach} ({shown})"
    details = "; ".join(part for part in (status.detail, f"{where}{reach}".strip(": ")) if part)
    return (
        f"{status.backend:<10} {_mark(status.configured):<11} {_mark(status.reachable):<10} "
        f"{status.spec:<15} {details}"
    )


def models_command(args: argparse.Namespace) -> int:
    urls = {"ollama": args.ollama_url, "openai": args.openai_url, "anthropic": args.anthropic_url}
    statuses = asyncio.run(backend_statuses(urls=urls, timeout=args.timeout))
    if args.json:
        for status in statuses:
            print(json.dumps(status.to_dict(), ensure_ascii=False))
        return 0
    print(f"{'backend':<10} {'configured':<11} {'reachable':<10} {'spec':<15} details")
    for status in statuses:
        print(_line(status))
    return 0
