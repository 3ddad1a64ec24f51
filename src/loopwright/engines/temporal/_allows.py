"""What a worker lets the runs it executes do: its own flags, never a run's spec.

    loopwright worker --allow-commands --allow-verify --allow-tools ./tools.py \
        --allow-mcp "python vault_server.py" --agent my_agents:support

A run's spec comes from whoever started the run; a worker trusts its own operator. By
default a worker allows nothing that runs a program or loads code a spec names: no
`run_command` (nor a skill's commands), no `verify` command, no tool file, task file,
skill folder or `module:function` tool, no MCP server, no agent built in Python (a run
naming one runs only on a worker started with `--agent` and that same reference, from
the worker's own agent: engines/temporal/_worker_agent.py). The built-in tools (files in the
run's workspace, `echo`, ...) are always there. Before a worker builds a run (its
`prepare` activity, and each time a worker builds the run for a later step: every worker
checks for itself) it compares what the spec asks for with what it allows; a run that
asks for more fails at once, with one line naming each thing it asked for and the flag
that would allow it, and nothing of it has run.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import ConfigurationError
from loopwright.runtime import RunSpec
from loopwright.tasks import TaskSpec
from loopwright.tools import OPT_IN_TOOLS

PATH_SUFFIXES = (".py", ".yaml", ".yml")


@dataclass(frozen=True)
class WorkerAllows:
    """What the runs of one worker may ask for (the default: nothing dangerous)."""

    commands: bool = False
    """`run_command`, and a skill's !`command` lines: programs on the worker's host."""
    verify: bool = False
    """A run's `verify` command (a shell command run on the worker's host at the end)."""
    paths: tuple[Path, ...] = ()
    """Tool files, task files and skill folders runs may load: files, or folders (everything
    under them), resolved."""
    modules: tuple[str, ...] = ()
    """Python modules (and their submodules) whose functions runs may name as tools."""
    mcp: tuple[str, ...] = ()
    """MCP servers runs may open: each command or URL exactly as a run names it."""
    agent: str | None = None
    """The agent built in Python the worker was started with (`--agent`), as its operator
    named it: the runs whose spec names this same reference run it."""

    @classmethod
    def of(
        cls,
        *,
        commands: bool = False,
        verify: bool = False,
        tools: Iterable[str] = (),
        mcp: Iterable[str] = (),
        agent: str | None = None,
    ) -> WorkerAllows:
        """From the worker's flags: `tools` are paths (with a `/`, or ending in .py, .yaml
        or .yml) and module names, also comma-separated; relative paths are the worker's
        folder's."""
        items = [part.strip() for item in tools for part in item.split(",") if part.strip()]
        paths = tuple(Path(i).expanduser().resolve() for i in items if _is_path(i))
        modules = tuple(i for i in items if not _is_path(i))
        servers = tuple(server.strip() for server in mcp if server.strip())
        named = agent.strip() if agent and agent.strip() else None
        return cls(commands, verify, paths, modules, servers, named)

    def describe(self) -> str:
        """What it allows, in a few words (the worker says it when it starts)."""
        said = [
            "commands" if self.commands else "",
            "verify commands" if self.verify else "",
            *(f"code in {path}" for path in self.paths),
            *(f"module {module}" for module in self.modules),
            *(f"MCP server {server!r}" for server in self.mcp),
            f"the agent {self.agent}" if self.agent else "",
        ]
        allowed = ", ".join(s for s in said if s)
        return allowed or (
            "no commands, verify commands, tool or task files, MCP servers or agents built in "
            "Python"
        )

    def check_run(self, run_id: str, spec: RunSpec) -> None:
        """A ConfigurationError naming what the agent run's spec asks for beyond this."""
        asked: list[str] = []
        if spec.agent is not None and spec.agent != self.agent:  # compared, never imported
            asked.append(f"the agent {spec.agent!r} (--agent {shlex.quote(spec.agent)})")
        for name in (t.strip() for t in spec.tools):
            if name in OPT_IN_TOOLS and not self.commands:
                asked.append(f"the tool {name} (--allow-commands)")
            elif ":" in name and name not in OPT_IN_TOOLS:
                asked += self._code(f"the tool {name!r}", name.rsplit(":", 1)[0])
        if spec.skill:
            asked += self._code(f"the skill {spec.skill!r}", spec.skill, path=True)
            if spec.allow_skill_commands and not self.commands:
                asked.append("the skill's commands (--allow-commands)")
        if spec.verify and not self.verify:
            asked.append(f"the verify command {_short(spec.verify)} (--allow-verify)")
        for server in spec.mcp:
            if server.strip() not in self.mcp:
                flag = f"--allow-mcp {shlex.quote(server.strip())}"
                asked.append(f"the MCP server {_short(server)} ({flag})")
        _refuse(run_id, asked)

    def check_task(self, run_id: str, spec: TaskSpec) -> None:
        """A ConfigurationError when the task run's task file is not one this allows."""
        _refuse(run_id, self._code(f"the task file {spec.task_file!r}", spec.task_file, path=True))

    def _code(self, what: str, target: str, *, path: bool = False) -> list[str]:
        """[] if the code at `target` (a file, a folder or a module) is allowed, else what
        was asked and the flag that allows it."""
        if path or _is_path(target):
            resolved = Path(target).expanduser().resolve()
            if any(resolved == p or p in resolved.parents for p in self.paths):
                return []
            return [f"{what} (--allow-tools {shlex.quote(str(resolved))})"]
        if any(target == m or target.startswith(m + ".") for m in self.modules):
            return []
        return [f"{what} (--allow-tools {shlex.quote(target)})"]


def _refuse(run_id: str, asked: list[str]) -> None:
    if asked:
        raise ConfigurationError(
            f"run {run_id} asks for what this worker does not allow: {'; '.join(asked)}. "
            "Start the worker with the flag named for each (loopwright worker --help), "
            "or give the run to workers that allow it (--task-queue)"
        )


def _is_path(item: str) -> bool:
    return "/" in item or item.endswith(PATH_SUFFIXES) or item in (".", "..", "~")


def _short(text: str, limit: int = 200) -> str:
    text = text.strip()
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
