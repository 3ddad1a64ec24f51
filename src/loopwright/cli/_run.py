"""`loopwright run`: run an agent on a request and show it live."""

from __future__ import annotations

import argparse
import asyncio

from loopwright.agent import AgentExecutor, AgentOptions, CommandVerifier, ExecutionResult
from loopwright.cli._view import JsonLinesView, LiveView
from loopwright.events import Event
from loopwright.runtime import RunSpec, build_agent
from loopwright.safety.scrub import read_secrets_file

DEFAULT_MODEL = "local"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("run", help="run an agent on a request")
    parser.add_argument("request", help="what the agent should do")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="model spec (default: local)")
    parser.add_argument("--base-url", default=None, help="server URL for the model provider")
    parser.add_argument(
        "--tools",
        default="",
        help="comma-separated tools: built-in names, module:function or path/to/file.py:function",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON event per line")
    parser.add_argument("--workspace", default=None, help="root for file tools (default: .)")
    parser.add_argument("--tool-mode", choices=["native", "prompted"], default=None)
    parser.add_argument("--max-iterations", type=int, default=None)
    parser.add_argument("--tier", choices=["trivial", "standard", "complex"], default="standard")
    parser.add_argument("--timeout", type=float, default=None, help="wall clock for the run (s)")
    parser.add_argument("--iteration-timeout", type=float, default=None)
    parser.add_argument("--max-tokens-total", type=int, default=None)
    parser.add_argument("--max-cost", type=float, default=None, help="USD")
    parser.add_argument("--repetition-threshold", type=int, default=3)
    parser.add_argument("--no-progress-limit", type=int, default=5)
    parser.add_argument("--context-window", type=int, default=None, help="tokens")
    parser.add_argument(
        "--verify", default=None, metavar="CMD", help="check the workspace at the end (shell)"
    )
    parser.add_argument(
        "--secret", action="append", default=[], metavar="VALUE", help="redact VALUE; repeatable"
    )
    parser.add_argument(
        "--secrets-file",
        action="append",
        default=[],
        metavar="PATH",
        help="redact every value in PATH (one per line, or NAME=value lines); repeatable",
    )
    parser.add_argument("--skill", default=None, help="run a skill folder (SKILL.md)")
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="SERVER",
        help="an MCP server: a command (stdio) or an http(s) URL; repeatable",
    )
    parser.add_argument(
        "--allow-commands",
        action="store_true",
        help="let --tools name run_command (it runs programs in the workspace; off by default)",
    )
    parser.add_argument(
        "--allow-skill-commands",
        action="store_true",
        help="let the skill's !`command` lines run (off by default)",
    )
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
        no_progress_limit=args.no_progress_limit,
        context_window=getattr(args, "context_window", None),
    )


def spec_from_args(args: argparse.Namespace) -> RunSpec:
    return RunSpec(
        request=args.request,
        model=args.model,
        base_url=args.base_url,
        tools=tuple(t.strip() for t in args.tools.split(",") if t.strip()),
        workspace=args.workspace,
        options=options_from_args(args),
        extra=skill_extra(args),
    )


def skill_extra(args: argparse.Namespace) -> dict[str, object]:
    extra: dict[str, object] = {}
    if args.skill:
        extra.update(skill=args.skill, allow_skill_commands=args.allow_skill_commands)
    if args.mcp:
        extra["mcp"] = list(args.mcp)
    if getattr(args, "allow_commands", False):
        extra["allow_commands"] = True
    if getattr(args, "verify", None):
        extra["verify"] = args.verify
    return extra


def guarded(agent: AgentExecutor, args: argparse.Namespace) -> AgentExecutor:
    """Add the secrets the user named (never recorded in the run) and the verifier."""
    secrets = list(getattr(args, "secret", []))
    for path in getattr(args, "secrets_file", []):
        secrets += read_secrets_file(path)
    if secrets:
        agent.scrubber = agent.scrubber.with_secrets(secrets)
    if getattr(args, "verify", None):
        agent.verifier = CommandVerifier(args.verify)
    return agent


def run_command(args: argparse.Namespace) -> int:
    spec = spec_from_args(args)
    view = JsonLinesView() if args.json else LiveView()

    async def show(event: Event) -> None:
        view.show(event)

    async def run_with_mcp() -> ExecutionResult:
        from loopwright.mcp import MCPConnections

        async with MCPConnections(args.mcp) as servers:
            agent = guarded(build_agent(spec, extra_tools=servers.tools()), args)
            return await agent.run(args.request, on_event=show)

    try:
        if args.mcp:
            result = asyncio.run(run_with_mcp())
        else:
            agent = guarded(build_agent(spec), args)
            result = asyncio.run(agent.run(args.request, on_event=show))
    finally:
        view.close()
    return 0 if result.success else 1
