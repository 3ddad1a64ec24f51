"""The `read` a skill run offers when the user offers none: the skill's own files only.

A skill lists its supporting files in the prompt and asks the model to read them when it
needs them. A run that offers no `read` tool (no `--tools read`) would leave the model told
to use a tool it does not have, so the skill run offers this one: it reads inside the
skill's folder and nowhere else (never the workspace), the files the skill brought with
it. Offering `read` (`--tools read`) replaces it with the built-in one, which reads the
workspace and the skill's folder.
"""

from __future__ import annotations

from pathlib import Path

from loopwright.errors import ToolError
from loopwright.tools import BUILTIN_TOOLS, Tool, ToolContext, ToolRegistry, tool

READ_TOOL = "read"


def skill_read_tool(folder: Path) -> Tool:
    """A `read` tool confined to `folder` (a skill's folder)."""
    root = folder.resolve()
    builtin = BUILTIN_TOOLS[READ_TOOL].function

    @tool(name=READ_TOOL, effect="read", aliases={"file_path": "path"})
    def read(path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        """Read a file of the skill's folder (its supporting files), optionally only a range
        of lines (1-based, inclusive). It reads nothing outside that folder.

        Args:
            path: file path relative to the skill directory
            start_line: first line to return
            end_line: last line to return
        """
        own = ToolContext(workspace=root)  # the skill folder is its whole world
        try:
            return str(builtin(own, path, start_line, end_line))
        except ToolError as refused:
            reason = str(refused)
            if "outside the workspace" in reason or "no such file" in reason:
                raise ToolError(
                    f"{path!r} is not a file of the skill folder {root}: this run's read "
                    "tool reads only the skill's own files (the user did not offer read "
                    "for the workspace)"
                ) from None
            raise

    return read


def with_skill_read(registry: ToolRegistry, folder: Path, files: int) -> ToolRegistry:
    """`registry`, plus the skill's own `read` when the skill has supporting files and the
    registry has no `read` (a new registry; the given one is not changed)."""
    if not files or READ_TOOL in registry:
        return registry
    return ToolRegistry([*registry, skill_read_tool(folder)])
