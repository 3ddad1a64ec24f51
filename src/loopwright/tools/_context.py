"""ToolContext: what a running tool may know about its run (workspace, writes so far, the
run's dependencies)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic

from loopwright.run_context import DepsT, RunContext


@dataclass
class ToolContext(Generic[DepsT]):
    """What a running tool may know about its run. Declare a parameter `ctx: ToolContext`,
    or `ctx: ToolContext[MyDeps]` to get the run's dependencies typed as `ctx.deps`.

    A tool gets one per call (`call_id` is its call's); `modified_files` is the run's."""

    run_id: str = ""
    workspace: Path = field(default_factory=Path.cwd)
    modified_files: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    """Path (relative to the workspace) -> (sha256 before the run, sha256 now); None = absent."""
    readable_roots: list[Path] = field(default_factory=list)
    """Folders outside the workspace that read-only tools may read (e.g. a skill's folder)."""
    call_id: str = ""
    """The id of the tool call being run."""
    run: RunContext | None = None
    """The run's context (an agent run's; None for a task run or a call outside a run):
    a sub-agent tool starts its run from it."""
    deps: DepsT = None  # type: ignore[assignment]  # None when the run was given none
    """The run's dependencies: what `agent.run(request, deps=...)` was given (of the agent's
    `deps_type`); None when it was given none. Never recorded: each process of a run gets
    them from its caller."""

    @classmethod
    def of_run(cls, run: RunContext) -> ToolContext[Any]:
        """The context of the tools of the run `run`."""
        return ToolContext(
            run.run_id, run.workspace, readable_roots=list(run.readable_roots), run=run,
            deps=run.deps,
        )  # fmt: skip

    def for_call(self, call_id: str) -> ToolContext[DepsT]:
        """This context for the call `call_id` (sharing the run's `modified_files`)."""
        one = copy.copy(self)
        one.call_id = call_id
        return one

    def record_write(
        self, rel_path: str, before_sha256: str | None, after_sha256: str | None
    ) -> None:
        """Note that a tool changed `rel_path`; the first `before` of the run is kept."""
        first_before = self.modified_files.get(rel_path, (before_sha256, None))[0]
        self.modified_files[rel_path] = (first_before, after_sha256)
