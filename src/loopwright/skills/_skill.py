"""Skills in the Agent Skills format: a folder with SKILL.md (YAML front matter + body)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopwright.errors import SkillError, SkillProblems, TaskParseError
from loopwright.tasks._yaml import load_yaml

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
    """A parsed skill: its metadata, its instructions (the body) and its folder.

    `warnings` name rules of the format that published skills break and that do not stop the
    skill from working (a description over the length limit), as `file:line: problem`."""

    metadata: SkillMetadata
    content: str
    path: Path
    warnings: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.metadata.name


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    """(front matter mapping, body) of a Markdown file that starts with `---`."""
    if not text.startswith("---"):
        raise SkillError(where, "missing YAML front matter (the file must start with '---')", 1)
    end = re.search(r"^---\s*$", text[3:], re.M)
    if end is None:
        raise SkillError(where, "front matter is not closed with a '---' line", 1)
    raw = text[3 : 3 + end.start()]
    body = text[3 + end.end() :].lstrip("\n")
    try:  # bounded like a task file: size, depth, aliases expanded (skills come from others)
        data = load_yaml(raw, where) or {}
    except TaskParseError as exc:
        message = exc.message.replace("not valid YAML", "front matter is not valid YAML")
        raise SkillError(where, message, exc.line) from None
    if not isinstance(data, dict):
        raise SkillError(where, "front matter must be a YAML mapping of keys to values", 2)
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


def key_line(text: str, key: str) -> int | None:
    """The line (1-based, in the whole file) where the front matter sets `key`."""
    for number, line in enumerate(text.splitlines()[1:], start=2):
        if line.strip() in {"---", "..."}:
            return None
        if re.match(rf"^{re.escape(key)}\s*:", line):
            return number
    return None


def _required_text(
    data: dict[str, Any], key: str, where: str, line: int | None, problems: list[SkillError]
) -> str:
    value = data.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        problems.append(
            SkillError(where, f"front matter is missing the required '{key}'", line or 1)
        )
        return ""
    if not isinstance(value, str):
        problems.append(SkillError(where, f"'{key}' must be text", line))
        return ""
    return value.strip()


def _name_problems(name: str, folder: str, where: str, line: int | None) -> list[SkillError]:
    if not name:
        return []
    found = []
    if len(name) > MAX_NAME_LENGTH:
        found.append(f"'name' is {len(name)} characters long (at most {MAX_NAME_LENGTH})")
    if not NAME_PATTERN.match(name):
        found.append(f"name {name!r} must be lowercase letters, digits and hyphens")
    if name != folder:
        found.append(f"name {name!r} does not match the folder name {folder!r}")
    return [SkillError(where, message, line) for message in found]


def _read_skill_file(path: Path) -> str:
    skill_file = path / SKILL_FILE
    if not path.is_dir():
        raise SkillError(str(path), "not a folder (a skill is a folder containing SKILL.md)")
    if not skill_file.is_file():
        raise SkillError(str(path), f"no {SKILL_FILE} in this folder")
    if not skill_file.resolve().is_relative_to(path.resolve()):
        raise SkillError(str(skill_file), "a link that leads out of the skill folder")
    try:
        return skill_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillError(str(skill_file), f"cannot read the file: {exc}") from None


def load_skill(folder: str | Path, *, known_tools: Iterable[str] | None = None) -> Skill:
    """Read and check a skill folder. Every problem is found in one pass: one raises that
    SkillError, several raise SkillProblems (file:line: problem each, in line order)."""
    path = Path(folder).resolve()
    where = str(path / SKILL_FILE)
    text = _read_skill_file(path)
    data, body = split_front_matter(text, where)
    lines = {key: key_line(text, key) for key in ("name", "description", "allowed-tools")}
    problems: list[SkillError] = []
    name = _required_text(data, "name", where, lines["name"], problems)
    description = _required_text(data, "description", where, lines["description"], problems)
    problems += _name_problems(name, path.name, where, lines["name"])
    allowed = None
    try:
        allowed = _allowed_tools(data.get("allowed-tools"), where)
    except SkillError as exc:
        problems.append(SkillError(where, exc.message, lines["allowed-tools"]))
    if allowed is not None and known_tools is not None:
        unknown = sorted(set(allowed) - set(known_tools))
        if unknown:
            message = (
                f"unknown tool(s) in allowed-tools: {', '.join(unknown)} "
                f"(available: {', '.join(sorted(known_tools))})"
            )
            problems.append(SkillError(where, message, lines["allowed-tools"]))
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        problems.append(
            SkillError(where, "'metadata' must be a mapping", key_line(text, "metadata"))
        )
    if problems:
        problems.sort(key=lambda p: p.line or 0)
        raise problems[0] if len(problems) == 1 else SkillProblems(problems)
    warnings = []
    if len(description) > MAX_DESCRIPTION_LENGTH:
        warnings.append(
            f"{where}:{lines['description'] or 1}: 'description' is {len(description)} characters "
            f"long (the format allows {MAX_DESCRIPTION_LENGTH}); the skill is used as it is"
        )
    meta = SkillMetadata(name, description, allowed, data.get("license"), metadata)
    return Skill(meta, body, path, tuple(warnings))


@dataclass(frozen=True)
class SkillScan:
    """What a scan of skill folders found: every skill that loads, and each that does not."""

    skills: list[Skill]
    problems: list[SkillError]

    @property
    def warnings(self) -> list[str]:
        return [warning for skill in self.skills for warning in skill.warnings]


MAX_SCAN_DEPTH = 3
NO_FOLDER = "no such folder (give the folder holding your skills, or a skill's own folder)"
NOT_A_FOLDER = "not a folder (give the folder holding your skills, or a skill's own folder)"


def skill_folders(root: Path, depth: int = MAX_SCAN_DEPTH) -> list[Path]:
    """Folders under `root` holding a SKILL.md, up to `depth` levels down (collections often
    group skills: `document-skills/pdf/SKILL.md`); hidden folders and links are skipped, and
    a skill's own subfolders are not searched."""
    found: list[Path] = []
    for child in sorted(root.iterdir()):
        if child.name.startswith(".") or child.is_symlink() or not child.is_dir():
            continue
        if (child / SKILL_FILE).is_file():
            found.append(child)
        elif depth > 1:
            found.extend(skill_folders(child, depth - 1))
    return found


def scan_skills(
    folders: Iterable[str | Path], *, known_tools: Iterable[str] | None = None
) -> SkillScan:
    """Every skill in the given folders (a folder may itself be a skill). One bad skill
    never hides the others: it is reported in `problems` and the scan goes on. Given
    `known_tools`, a skill whose allowed-tools names another tool is a problem (as when it
    runs)."""
    known = None if known_tools is None else tuple(known_tools)
    skills: list[Skill] = []
    problems: list[SkillError] = []
    for folder in folders:
        root = Path(folder)
        if (root / SKILL_FILE).is_file():
            candidates = [root]
        elif root.is_dir():
            candidates = skill_folders(root)
        else:
            problem = NOT_A_FOLDER if root.exists() else NO_FOLDER
            problems.append(SkillError(str(root.absolute()), problem))
            continue
        for candidate in candidates:
            try:
                skills.append(load_skill(candidate, known_tools=known))
            except SkillProblems as exc:
                problems.extend(exc.problems)
            except SkillError as exc:
                problems.append(exc)
    return SkillScan(skills, problems)


def discover_skills(folders: Iterable[str | Path]) -> list[Skill]:
    """Every skill in the given folders; raises the first problem (`scan_skills` reports all)."""
    scan = scan_skills(folders)
    if scan.problems:
        raise scan.problems[0]
    return scan.skills
