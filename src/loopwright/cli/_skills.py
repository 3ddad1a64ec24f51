"""`loopwright skills list` and `loopwright prompt`: inspect skills and the exact system prompt."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from loopwright.models import ScriptedModel
from loopwright.runtime import RunSpec, build_agent
from loopwright.skills import ContextLoader, discover_skills


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    skills = commands.add_parser("skills", help="list and inspect skills (SKILL.md folders)")
    actions = skills.add_subparsers(dest="skills_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="name, description, files, allowed tools")
    listing.add_argument("folders", nargs="*", default=["skills"], help="skill folders or parents")
    listing.set_defaults(handler=list_command)

    prompt = commands.add_parser("prompt", help="print the exact system prompt the model gets")
    prompt.add_argument("request", nargs="?", default="", help="the request (optional)")
    prompt.add_argument("--skill", default=None, help="a skill folder")
    prompt.add_argument("--tools", default="", help="comma-separated tools (as for `run`)")
    prompt.add_argument("--tool-mode", choices=["native", "prompted"], default="prompted")
    prompt.add_argument("--workspace", default=None)
    prompt.add_argument("--allow-skill-commands", action="store_true")
    prompt.set_defaults(handler=prompt_command)


def list_command(args: argparse.Namespace) -> int:
    table = Table("name", "description", "files", "allowed tools")
    loader = ContextLoader()
    for skill in discover_skills(args.folders):
        files = loader.load(skill).available_files
        listed = ", ".join(f"{name} ({ref.estimated_lines})" for name, ref in files.items())
        allowed = skill.metadata.allowed_tools
        table.add_row(
            skill.name,
            skill.metadata.description,
            listed or "-",
            " ".join(allowed) if allowed is not None else "(all)",
        )
    Console().print(table)
    return 0


def prompt_command(args: argparse.Namespace) -> int:
    extra: dict[str, object] = {}
    if args.skill:
        extra = {"skill": args.skill, "allow_skill_commands": args.allow_skill_commands}
    spec = RunSpec(
        request=args.request,
        tools=tuple(t.strip() for t in args.tools.split(",") if t.strip()),
        workspace=args.workspace,
        extra=extra,
    )
    model = ScriptedModel([], tool_mode=args.tool_mode, name="prompt-preview")
    print(build_agent(spec, model=model).system_prompt(spec.request), end="")
    return 0
