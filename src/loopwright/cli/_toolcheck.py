"""Check `--tools` specs before a run starts: every problem at once, no tool file executed.

A missing file, a file that is not valid Python (`file:line`) and a function a file does
not define are all reported together; the run's own resolution still has the last word.
"""

from __future__ import annotations

import argparse

from loopwright.errors import ConfigurationError


def check_tool_specs(args: argparse.Namespace) -> None:
    """For commands that take `--tools` (run, prompt): raise one error listing every problem."""
    if getattr(args, "config_section", None) != "run" or not getattr(args, "tools", None):
        return
    from loopwright.tasks._toolfile import static_tools  # only for the commands that take --tools

    specs = [spec.strip() for spec in str(args.tools).split(",") if spec.strip()]
    found = static_tools(specs, allow_commands=True)  # run_command: resolution says how
    lines = [
        f"{file}:{line}: {message}" if file else f"--tools: {message}"
        for file, line, message in found.problems
    ]
    if lines:
        raise ConfigurationError("\n".join(lines))
