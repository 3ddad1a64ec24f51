"""`loopwright models`: which model backends are configured, and which servers answer."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from rich.padding import Padding
from rich.text import Text

from loopwright.cli._options import add_options, opt
from loopwright.cli._output import console, is_terminal, print_json, print_records
from loopwright.safety.terminal import markup, visible

if TYPE_CHECKING:
    from loopwright.models._status import BackendStatus


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
                help="print one JSON array, an object per backend",
                group="output",
                action="store_true",
            ),
        ],
        None,
    )
    parser.set_defaults(handler=models_command)


def _mark(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


def _row(status: BackendStatus) -> list[str]:
    where = f"{status.url}: " if status.url else ""
    reach = status.reach_detail
    if status.models:
        shown = ", ".join(status.models[:8]) + (" ..." if len(status.models) > 8 else "")
        reach = f"{reach} ({shown})"
    details = "; ".join(part for part in (status.detail, f"{where}{reach}".strip(": ")) if part)
    return [
        status.backend,
        _mark(status.configured),
        _mark(status.reachable),
        status.spec,
        details,
    ]


def models_command(args: argparse.Namespace) -> int:
    from loopwright.models._status import backend_statuses  # httpx: only for this command

    urls = {"ollama": args.ollama_url, "openai": args.openai_url, "anthropic": args.anthropic_url}
    statuses = asyncio.run(backend_statuses(urls=urls, timeout=args.timeout))
    if args.json:
        print_json([status.to_dict() for status in statuses])
        return 0
    if is_terminal():
        _blocks(statuses)
        return 0
    columns = ["backend", "configured", "reachable", "spec", "details"]
    print_records(columns, [_row(status) for status in statuses])
    return 0


def _blocks(statuses: list[BackendStatus]) -> None:
    """On a terminal, a backend a block: a line of its state, then its details across the
    terminal's width (in a table's narrow column they took a line per few words)."""
    out = console()
    for status in statuses:
        backend, configured, reachable, spec, details = _row(status)
        out.print(
            f"[bold]{markup(backend)}[/]  configured {configured} · reachable {reachable} · "
            f"spec [cyan]{markup(spec)}[/]"
        )
        out.print(Padding(Text(visible(details), style="dim"), (0, 0, 0, 4)))
