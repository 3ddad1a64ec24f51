"""Seed 000's preprocessing pipeline: ContextLoader, StringSubstitutor, DynamicInjector."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from loopwright.prompts._builder import FileRef
from loopwright.safety.scrub import Scrubber
from loopwright.skills._skill import SKILL_FILE, Skill
from loopwright.tools._process import run_process, run_process_sync

MAX_LISTED_FILES = 200
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_COMMENT = re.compile(r"^\s*(?:#|//|--|;)\s*(.+?)\s*$")


@dataclass(frozen=True)
class LoadedContext:
    """A skill's supporting files: listed with a description and a line count, not loaded."""

    skill_dir: Path
    available_files: dict[str, FileRef] = field(default_factory=dict)


def describe_file(path: Path) -> tuple[str, int]:
    """(one-line description, line count): the first heading, or the first comment line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return "binary file", 0
    lines = text.splitlines()
    for line in lines[:40]:
        if line.startswith("#!"):
            continue
        match = _HEADING.match(line) if path.suffix in {".md", ".markdown"} else None
        match = match or (None if path.suffix in {".md", ".markdown"} else _COMMENT.match(line))
        if match:
            return match.group(1)[:120], len(lines)
    return "", len(lines)


class ContextLoader:
    """Lists a skill's supporting files (everything in the folder but SKILL.md)."""

    def load(self, skill: Skill) -> LoadedContext:
        described = skill.metadata.metadata.get("files")
        overrides = described if isinstance(described, dict) else {}
        files: dict[str, FileRef] = {}
        root = skill.path.resolve()
        for path in sorted(skill.path.rglob("*")):
            rel = path.relative_to(skill.path).as_posix()
            if rel == SKILL_FILE or _hidden(rel) or not _inside(path, root):
                continue
            description, line_count = describe_file(path)
            files[rel] = FileRef(str(overrides.get(rel, description)), line_count)
            if len(files) >= MAX_LISTED_FILES:
                break
        return LoadedContext(skill.path, files)


def _inside(path: Path, root: Path) -> bool:
    """A regular file whose real location is inside the skill folder: a link that leads out
    (to ~/.ssh, /etc) is skipped, as the `read` and `glob` tools refuse it."""
    try:
        return path.is_file() and path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a link loop
        return False


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") or part == "__pycache__" for part in rel.split("/"))


class StringSubstitutor:
    """Replaces $ARGUMENTS, $1.., ${SKILL_DIR}, ${SESSION_ID}, ${TASK_ID}; leaves others alone.

    A `` !`command` `` line comes from the skill's own text only: the skill's command lines
    are left as written (the request never enters a command), and a line the substitution
    turns into one (a request holding a line `` !`rm -rf ~` ``) gets a space in front, so
    `DynamicInjector` does not run it.
    """

    _PATTERN = re.compile(r"\$\{(SKILL_DIR|SESSION_ID|TASK_ID|ARGUMENTS)\}|\$(ARGUMENTS|\d+)")

    def substitute(
        self,
        content: str,
        *,
        arguments: str = "",
        skill_dir: str = "",
        session_id: str = "",
        task_id: str = "",
    ) -> str:
        positional = arguments.split()
        named = {
            "SKILL_DIR": skill_dir,
            "SESSION_ID": session_id,
            "TASK_ID": task_id,
            "ARGUMENTS": arguments,
        }

        def replace(match: re.Match[str]) -> str:
            key = match.group(1) or match.group(2)
            if key.isdigit():
                index = int(key) - 1
                return positional[index] if 0 <= index < len(positional) else match.group(0)
            return named[key]

        lines = content.split("\n")
        for index, line in enumerate(lines):
            if not COMMAND_LINE.match(line):
                lines[index] = _disarm(self._PATTERN.sub(replace, line))
        return "\n".join(lines)


COMMAND_LINE = re.compile(r"^!`(.+)`\s*$", re.M)
"""A line `` !`command` ``, run by `DynamicInjector` (with commands allowed)."""


def _disarm(text: str) -> str:
    """`text` with a space in front of each line that would read as a command line."""
    return COMMAND_LINE.sub(lambda match: " " + match.group(0), text)


class DynamicInjector:
    """Replaces lines of the form !`command` with the command's output (off by default).

    The command runs in the skill folder with a timeout; its output is scrubbed like any
    observation before it enters the prompt.
    """

    _LINE = COMMAND_LINE

    def __init__(
        self, *, enabled: bool = False, timeout_s: float = 10.0, scrubber: Scrubber | None = None
    ) -> None:
        self.enabled = enabled
        self.timeout_s = timeout_s
        self.scrubber = scrubber or Scrubber()

    async def inject(self, content: str, skill_dir: Path) -> str:
        if not self.enabled:
            return content
        pieces: list[str] = []
        last = 0
        for match in self._LINE.finditer(content):
            pieces.append(content[last : match.start()])
            pieces.append(await self._run(match.group(1), skill_dir))
            last = match.end()
        pieces.append(content[last:])
        return "".join(pieces)

    def inject_sync(self, content: str, skill_dir: Path) -> str:
        """`inject` for callers outside an event loop (the CLI builds agents before one runs)."""
        if not self.enabled:
            return content
        return self._LINE.sub(lambda m: self._run_sync(m.group(1), skill_dir), content)

    def _run_sync(self, command: str, skill_dir: Path) -> str:
        done = run_process_sync(command, cwd=skill_dir, timeout_s=self.timeout_s)
        if done.code is None:
            return f"[command timed out after {self.timeout_s:g}s: {command}]"
        return self._finish(done.output.rstrip("\n"), done.code, command)

    def _finish(self, text: str, returncode: int | None, command: str) -> str:
        if returncode:
            text += f"\n[command exited with status {returncode}: {command}]"
        return self.scrubber.scrub(text).text

    async def _run(self, command: str, skill_dir: Path) -> str:
        """The command's output; at the limit it and all it started are killed."""
        done = await run_process(command, cwd=skill_dir, timeout_s=self.timeout_s)
        if done.code is None:
            return f"[command timed out after {self.timeout_s:g}s: {command}]"
        return self._finish(done.output.rstrip("\n"), done.code, command)
