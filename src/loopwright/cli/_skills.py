"""`loopwright skills list` and `loopwright prompt`: list skills and print the exact system
prompt (`skills show`: cli/_skills_show.py)."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from loopwright.cli._options import ALLOW_SKILL_COMMANDS, WORKSPACE, add_options, opt
from loopwright.cli._output import CONFIG_EPILOG, print_json, print_problem, print_records
from loopwright.cli._skills_show import register_show
from loopwright.errors import SkillError
from loopwright.models._scripted import stand_in_model
from loopwright.runtime import RunSpec
from loopwright.runtime._spec import build_agent
from loopwright.safety.terminal import visible
from loopwright.skills import ContextLoader, Skill
from loopwright.skills._executor import known_tool_names
from loopwright.skills._skill import scan_skills
from loopwright.tools import Tool, ToolRegistry, resolve_tools

JSON_LIST = opt("--json", help="print one JSON document", group="output", action="store_true")
SKILL_TOOLS = opt(
    "--tools",
    help="your own tools a skill's allowed-tools may name, as for `run` (module:function, "
    "path/to/file.py:function); loopwright's tools are always known",
    group="tools",
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    skills = commands.add_parser("skills", help="list and inspect skills (SKILL.md folders)")
    actions = skills.add_subparsers(dest="skills_command", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list",
        help="name, description, files, allowed tools",
        description="List every skill that loads; report each that does not (file:line: "
        "problem) and every warning. Exit status 1 when a skill could not be loaded.",
    )
    listing.add_argument(
        "folders", nargs="*", default=["skills"], help="skill folders or parents (default: skills)"
    )
    add_options(listing, [SKILL_TOOLS, JSON_LIST], None)
    listing.set_defaults(handler=list_command)
    register_show(actions)

    prompt = commands.add_parser(
        "prompt",
        help="print the exact system prompt the model gets",
        epilog=CONFIG_EPILOG.format(section="run"),
    )
    prompt.add_argument("request", nargs="?", default="", help="the request (default: none)")
    add_options(
        prompt,
        [
            opt("--skill", help="a skill folder", group="tools", metavar="DIR"),
            opt("--tools", help="comma-separated tools (as for `run`)", group="tools", key="tools"),
            opt(
                "--tool-mode",
                help="how tools reach the model",
                group="model",
                choices=["native", "prompted"],
                default="prompted",
            ),
            WORKSPACE,
            opt(
                "--mcp",
                help="an MCP server whose tools join the prompt: a command (stdio) or an "
                "http(s) URL; repeatable",
                group="tools",
                action="append",
                default=[],
                metavar="SERVER",
            ),
            ALLOW_SKILL_COMMANDS,
            opt(
                "--json",
                help="print the prompt and the tools as one JSON object",
                group="output",
                action="store_true",
            ),
        ],
        "run",
    )
    prompt.set_defaults(handler=prompt_command)


def known_tools(args: argparse.Namespace) -> set[str]:
    """The tool names a skill's allowed-tools may use: loopwright's own and `--tools`'s."""
    specs = [t.strip() for t in (args.tools or "").split(",") if t.strip()]
    return known_tool_names(ToolRegistry(resolve_tools(specs, allow_commands=True)))


def too_big_for_the_model(skills: list[Skill], args: argparse.Namespace) -> list[str]:
    """What `run --skill` would refuse with the embedded model's context window: each skill
    whose prompt does not fit it (`skills show NAME --context-window N` for another model)."""
    from loopwright.cli._skills_show import EMBEDDED_CONTEXT
    from loopwright.skills._executor import prepare_skill_agent
    from loopwright.skills._fit import check_fits

    specs = [t.strip() for t in (args.tools or "").split(",") if t.strip()]
    registry = ToolRegistry(resolve_tools(specs, allow_commands=True))
    found = []
    for skill in skills:
        try:
            prepared = prepare_skill_agent(skill.path, "", registry)
            check_fits(skill, prepared.prompt_parts, EMBEDDED_CONTEXT)
        except SkillError as exc:
            other = f"`loopwright skills show {skill.name} --context-window N`: another model's"
            found.append(f"{exc} ({other})")
    return found


def skill_record(skill: Skill, loader: ContextLoader) -> dict[str, Any]:
    files = loader.load(skill).available_files
    return {
        "name": skill.name,
        "description": skill.metadata.description,
        "path": str(skill.path),
        "files": {name: ref.estimated_lines for name, ref in files.items()},
        "allowed_tools": (
            list(skill.metadata.allowed_tools) if skill.metadata.allowed_tools is not None else None
        ),
        "warnings": list(skill.warnings),
    }


def list_command(args: argparse.Namespace) -> int:
    scan = scan_skills(args.folders, known_tools=known_tools(args))
    loader = ContextLoader()
    records = [skill_record(skill, loader) for skill in scan.skills]
    problems = [
        {"file": p.path, "line": p.line, "problem": p.message, "text": str(p)}
        for p in scan.problems
    ]
    if args.json:
        print_json({"skills": records, "problems": problems})
    elif records:  # no header over nothing: the problems below say why
        rows = []
        for record in records:
            files = ", ".join(
                f"{name} ({lines:,} lines)" for name, lines in record["files"].items()
            )
            allowed = record["allowed_tools"]
            tools = " ".join(allowed) if allowed is not None else "(all)"
            rows.append([record["name"], record["description"], files or "-", tools])
        print_records(["name", "description", "files", "allowed tools"], rows)
    for warning in [*scan.warnings, *too_big_for_the_model(scan.skills, args)]:
        print_problem(warning, warning=True)
    for problem in scan.problems:
        print_problem(str(problem))
    if not records and not scan.problems and not args.json:
        folders = ", ".join(args.folders)
        print_problem(f"{folders}: no skills here (a skill is a folder containing SKILL.md)")
    return 1 if scan.problems else 0


def prompt_command(args: argparse.Namespace) -> int:
    spec = RunSpec(
        request=args.request,
        tools=tuple(t.strip() for t in (args.tools or "").split(",") if t.strip()),
        workspace=args.workspace,
        skill=args.skill or None,
        allow_skill_commands=bool(args.skill and args.allow_skill_commands),
        mcp=tuple(args.mcp or ()),
    )
    if not spec.mcp:
        return print_prompt(args, spec, [])
    return asyncio.run(prompt_with_servers(args, spec))


async def prompt_with_servers(args: argparse.Namespace, spec: RunSpec) -> int:
    """The prompt with the MCP servers' tools: each server is started (or reached), asked
    for its tools and closed again; none of their tools is called."""
    from loopwright.mcp import MCPConnections

    async with MCPConnections(list(spec.mcp)) as servers:
        return print_prompt(args, spec, servers.tools())


def print_prompt(args: argparse.Namespace, spec: RunSpec, server_tools: list[Tool]) -> int:
    model = stand_in_model("prompt-preview", args.tool_mode)
    agent = build_agent(spec, model=model, extra_tools=server_tools)
    prompt = agent.system_prompt(spec.request)
    if args.json:
        tools = agent.tools.names()
        print_json({"system_prompt": prompt, "tool_mode": args.tool_mode, "tools": tools})
    else:
        print(visible(prompt), end="")
    return 0
