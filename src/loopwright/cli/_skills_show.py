"""`loopwright skills show NAME`: one skill as a run would use it.

Its front matter, its supporting files (with their size in lines), the tools it may use
and which a run offers, and what the system prompt will hold, with its size in tokens
against the model's context window: a skill too big for the model is seen here, not at
the model's first call.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from loopwright.cli._options import add_options, opt
from loopwright.cli._output import print_json, print_problem
from loopwright.errors import SkillError, SkillProblems, UsageError
from loopwright.safety.terminal import visible
from loopwright.skills import ContextLoader, Skill, load_skill
from loopwright.skills._executor import PreparedSkill, known_tool_names, prepare_skill_agent
from loopwright.skills._fit import check_fits, estimate_prompt_tokens
from loopwright.skills._skill import SKILL_FILE, scan_skills, split_front_matter
from loopwright.tools import ToolRegistry, resolve_tools

EMBEDDED_CONTEXT = 8192
"""The embedded model's context window, in tokens (models/_local.py's DEFAULT_CONTEXT)."""


def register_show(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    show = actions.add_parser(
        "show",
        help="one skill: front matter, files, tools, what the prompt holds",
        description="Show one skill as a run would use it: its front matter, its supporting "
        "files (size in lines), the tools it may use, and what the system prompt will hold, "
        "with its size in tokens against the model's context window. Exit status 1 when "
        "the skill does not load or is too big for the model.",
    )
    show.add_argument("name", help="a skill's name (looked up in FOLDERS) or its folder")
    show.add_argument(
        "folders", nargs="*", default=["skills"], help="where to look (default: skills)"
    )
    add_options(
        show,
        [
            opt(
                "--tools",
                help="the tools a run would offer, as for `run`",
                group="tools",
            ),
            opt(
                "--context-window",
                help="the model's context window in tokens",
                group="model",
                type=int,
                metavar="TOKENS",
                default_text=f"{EMBEDDED_CONTEXT:,}, the embedded model's",
            ),
            opt("--json", help="print one JSON document", group="output", action="store_true"),
        ],
        None,
    )
    show.set_defaults(handler=show_command)


def find_skill(name: str, folders: list[str], known: set[str]) -> Skill:
    """The skill in folder `name`, else the one named `name` in `folders`."""
    if (Path(name) / SKILL_FILE).is_file():
        return load_skill(name, known_tools=known)
    scan = scan_skills(folders)
    for skill in scan.skills:
        if skill.name == name:
            return load_skill(skill.path, known_tools=known)
    for problem in scan.problems:  # a skill of that folder's name that does not load
        if Path(problem.path).parent.name == name or Path(problem.path).name == name:
            return load_skill(Path(problem.path).parent, known_tools=known)
    names = ", ".join(sorted(skill.name for skill in scan.skills)) or "none"
    where = ", ".join(folders)
    raise UsageError(f"no skill named {name!r} in {where} (found: {names})")


def show_record(
    skill: Skill, prepared: PreparedSkill, given: ToolRegistry, window: int
) -> dict[str, Any]:
    text = (skill.path / SKILL_FILE).read_text(encoding="utf-8")
    front, _ = split_front_matter(text, str(skill.path / SKILL_FILE))
    files = ContextLoader().load(skill).available_files
    offered = prepared.registry.filtered(prepared.allowed_tools).names()
    tokens = estimate_prompt_tokens(prepared.prompt_parts)
    try:
        check_fits(skill, prepared.prompt_parts, window)
        too_big = None
    except SkillError as exc:
        too_big = exc.message
    return {
        "name": skill.name,
        "path": str(skill.path),
        "front_matter": front,
        "files": [
            {"path": rel, "lines": ref.estimated_lines, "description": ref.description}
            for rel, ref in files.items()
        ],
        "allowed_tools": (
            list(skill.metadata.allowed_tools) if skill.metadata.allowed_tools is not None else None
        ),
        "offered_tools": offered,
        "own_read": "read" in offered and "read" not in given,
        "given_tools": given.names(),
        "takes_arguments": "$ARGUMENTS" in skill.content or "${ARGUMENTS}" in skill.content,
        "instructions_lines": len(skill.content.splitlines()),
        "prompt_tokens": tokens,
        "context_window": window,
        "too_big": too_big,
        "warnings": list(skill.warnings),
    }


def show_command(args: argparse.Namespace) -> int:
    specs = [t.strip() for t in (args.tools or "").split(",") if t.strip()]
    registry = ToolRegistry(resolve_tools(specs, allow_commands=True))
    window = args.context_window or EMBEDDED_CONTEXT
    try:
        skill = find_skill(args.name, args.folders, known_tool_names(registry))
    except SkillProblems as exc:
        for problem in exc.problems:
            print_problem(str(problem))
        return 1
    except SkillError as exc:
        print_problem(str(exc))
        return 1
    prepared = prepare_skill_agent(skill.path, "", registry)
    record = show_record(skill, prepared, registry, window)
    if args.json:
        print_json(record)
    else:
        print(visible(render(record)), end="")
    for warning in skill.warnings:
        print_problem(warning, warning=True)
    return 1 if record["too_big"] else 0


def render(record: dict[str, Any]) -> str:
    lines = [f"{record['name']}  {record['path']}", "", "front matter:"]
    for key, value in record["front_matter"].items():
        shown = value if isinstance(value, str) else json.dumps(value, default=str)
        lines.append(f"  {key}: {shown}")
    lines += ["", "supporting files (listed in the prompt, read on demand):"]
    for entry in record["files"]:
        about = f"  {entry['description']}" if entry["description"] else ""
        lines.append(f"  {entry['path']}  {entry['lines']:,} lines{about}")
    if not record["files"]:
        lines.append("  none")
    lines += ["", *tool_lines(record), "", *prompt_lines(record)]
    return "\n".join(lines) + "\n"


def tool_lines(record: dict[str, Any]) -> list[str]:
    allowed = record["allowed_tools"]
    offered = record["offered_tools"]
    lines = [
        "allowed tools: "
        + (" ".join(allowed) if allowed is not None else "not limited (every tool a run offers)"),
        "a run offers: " + (", ".join(offered) or "no tool"),
    ]
    if record["own_read"]:
        lines.append("  read: the skill's own files only (give --tools read to let it read yours)")
    missing = [name for name in allowed or () if name not in offered]
    if missing:
        lines.append(f"  not offered: {', '.join(missing)} (offer them with --tools)")
    return lines


def prompt_lines(record: dict[str, Any]) -> list[str]:
    files = len(record["files"])
    lines = [
        "the system prompt holds:",
        f"  the skill's instructions (the body of SKILL.md, {record['instructions_lines']:,} "
        "lines)" + ("; the request replaces $ARGUMENTS" if record["takes_arguments"] else ""),
    ]
    if files and "read" in record["offered_tools"]:
        lines.append(f"  the list of its {files} supporting file(s), not their content")
    lines += [
        "  the tools a run offers, the reply format and the rules",
        f"  about {record['prompt_tokens']:,} tokens before the tool descriptions; the model "
        f"reads {record['context_window']:,} at most",
    ]
    if record["too_big"]:
        lines.append(f"  too big: {record['too_big']}")
    tools = f" --tools {','.join(record['given_tools'])}" if record["given_tools"] else ""
    lines.append(f'see it whole: loopwright prompt --skill {record["path"]}{tools} "REQUEST"')
    return lines
