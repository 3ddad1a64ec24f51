"""ToolContext: what a running tool may know about its run (workspace, writes so far)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ToolContext:
    """What a running tool may know about its run. Declare a parameter `ctx: ToolContext`."""

    run_id: str = ""
    workspace: Path = field(default_factory=Path.cwd)
    modified_files: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    """Path (relative to the workspace) -> (sha256 before the run, sha256 now); None = absent."""
    readable_roots: list[Path] = field(default_factory=list)
    """Folders outside the workspace that read-only tools may read (e.g. a skill's folder)."""

    def record_write(
        self, rel_path: str, before_sha256: str | None, after_sha256: str | None
    ) -> None:
        """Note that a tool changed `rel_path`; the first `before` of the run is kept."""
        first_before = self.modified_files.get(rel_path, (before_sha256, None))[0]
        self.modified_files[rel_path] = (first_before, after_sha256)
