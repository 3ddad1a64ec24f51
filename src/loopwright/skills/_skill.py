"""Skills in the Agent Skills format: a folder with SKILL.md (YAML front matter + body)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from loopwright.errors import SkillError

SKILL_FILE = "SKILL.md"
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
KNOWN_KEYS = {"name", "description", "allowed-tools", "license", "metadata", "compatibility"}
TOOL_ALIASES = {
    "Read": "read",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "Grep": "grep",
    "Glob": "glob",
    "LS": "list_files",
    "Bash": "run_command",
}
"""Tool names used by other Agent Skills runtimes, mapped to loopwright's."""


def canonical_tool_name(name: str) -> str:
    """`Bash(git:*)` -> `run_command`, `Read` -> `read`; loopwright names pass through."""
    base = name.split("(", 1)[0].strip()
    return TOOL_ALIASES.get(base, base)


@dataclass(frozen=True)
class SkillMetadata:
    name: str
    description: str
    allowed_tools: tuple[str, ...] | None = None
    license: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Skill:
    """A parsed skill: its metadata, its instructions (the body) and its folder."""

    metadata: SkillMetadata
    content: str
    path: Path

    @property
    def name(self) -> str:
        return self.metadata.name


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    """(front matter mapping, body) of a Markdown file that starts with `---`."""
    if not text.startswith("---"):
        raise SkillError(where, "missing YAML front matter (the file must start with '---')")
    end = re.search(r"^---\s*$", text[3:], re.M)
    if end is None:
        raise SkillError(where, "front matter is not closed with a '---' line")
    raw = text[3 : 3 + end.start()]
    body = text[3 + end.end() :].lstrip("\n")
    try:
        data = yaml.safe_load(raw) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 2}" if mark is not None else ""
        raise SkillError(where, f"front matter is not valid YAML{line}: {exc}") from None
    if not isinstance(data, dict):
        raise SkillError(where, "front matter must be a YAML mapping of keys to values")
    return data, body


def _allowed_tools(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = re.findall(r"[\w.-]+(?:\([^)]*\))?", value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(dict.fromkeys(canonical_tool_name(item) for item in value))
    raise SkillError(
        where, "'allowed-tools' must be a list of tool names or a space-separated string"
    )


def _required_text(data: dict[str, Any], key: str, where: str, limit: int) -> str:
    value = data.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise SkillError(where, f"front matter is missing the required '{key}'")
    if not isinstance(value, str):
        raise SkillError(where, f"'{key}' must be text")
    if len(value) > limit:
        raise SkillError(where, f"'{key}' is {len(value)} characters long (at most {limit})")
    return value.strip()


def load_skill(folder: str | Path, *, known_tools: Iterable[str] | None = None) -> Skill:
    """Read and check a skill folder. Raises SkillError naming the file and the problem."""
    path = Path(folder).resolve()
    skill_file = path / SKILL_FILE
    where = str(skill_file)
    if not path.is_dir():
        raise SkillError(str(path), "not a folder (a skill is a folder containing SKILL.md)")
    if not skill_file.is_file():
        raise SkillError(str(path), f"no {SKILL_FILE} in this folder")
    data, body = split_front_matter(skill_file.read_text(encoding="utf-8"), where)
    name = _required_text(data, "name", where, MAX_NAME_LENGTH)
    description = _required_text(data, "description", where, MAX_DESCRIPTION_LENGTH)
    if not NAME_PATTERN.match(name):
        raise SkillError(where, f"name {name!r} must be lowercase letters, digits and hyphens")
    if name != path.name:
        raise SkillError(where, f"name {name!r} does not match the folder name {path.name!r}")
    allowed = _allowed_tools(data.get("allowed-tools"), where)
    if allowed is not None and known_tools is not None:
        unknown = sorted(set(allowed) - set(known_tools))
        if unknown:
            raise SkillError(
                where,
                f"unknown tool(s) in allowed-tools: {', '.join(unknown)} "
                f"(available: {', '.join(sorted(known_tools))})",
            )
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise SkillError(where, "'metadata' must be a mapping")
    meta = SkillMetadata(name, description, allowed, data.get("license"), metadata)
    return Skill(meta, body, path)


def discover_skills(folders: Iterable[str | Path]) -> list[Skill]:
    """Every skill in the given folders (a folder may itself be a skill)."""
    skills: list[Skill] = []
    for folder in folders:
        root = Path(folder)
        if (root / SKILL_FILE).is_file():
            skills.append(load_skill(root))
            continue
        if not root.is_dir():
            raise SkillError(str(root), "not a folder")
        skills.extend(
            load_skill(child) for child in sorted(root.iterdir()) if (child / SKILL_FILE).is_file()
        )
    return skills
