"""`loopwright models`: which model backends are configured, and which servers answer."""

from __future__ import annotations

import argparse
import asyncio
import json

from loopwright.models._status import BackendStatus, backend_statuses


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "models", help="list the model backends: configured? reachable? (never prints keys)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per backend")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds per server check")
    parser.add_argument("--ollama-url", default=None, help="default: OLLAMA_HOST or localhost")
    parser.add_argument("--openai-url", default=None, help="default: OPENAI_BASE_URL or OpenAI")
    parser.add_argument("--anthropic-url", default=None, help="default: ANTHROPIC_BASE_URL")
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
