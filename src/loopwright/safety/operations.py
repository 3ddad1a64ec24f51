"""The one safety authority for operations that change the world (seed 004's `safety.py`).

The task runner decides *when* these run; this module decides *what* is safe:

- `classify_operation(tool, arguments)`: read, write or destructive, from the tool's declared
  `effect` and its arguments (`dry_run=True` reads; `action="delete"` or `force=True` on a
  write tool is destructive).
- `before_operation(tool, arguments, safety, step=...)`: takes a backup before a write and
  returns the `ChangeEntry` items to log. Files named by a path argument are copied (a file
  that does not exist yet is recorded as created, so undo deletes it); other tools need a
  user-supplied `SnapshotHook`.
- `execute_undo(change_log, safety)`: walks the change log in reverse and restores each entry,
  byte for byte for files.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from loopwright.errors import LoopwrightError, TaskRunError
from loopwright.paths import resolve_in_workspace, special_kind

OperationClass = Literal["read", "write", "destructive"]


class DeclaredTool(Protocol):
    """What the safety layer reads of a tool: its name and its declared effect (a
    `loopwright.tools.Tool` is one; this layer does not import the tools)."""

    @property
    def name(self) -> str: ...

    @property
    def effect(self) -> str: ...


DESTRUCTIVE_ACTIONS = frozenset(
    {"delete", "remove", "drop", "destroy", "purge", "truncate", "wipe", "reset", "revoke"}
)
ACTION_ARGUMENTS = ("action", "operation", "mode", "method")
DESTRUCTIVE_FLAGS = ("delete", "force", "purge", "recursive")
PATH_ARGUMENTS = (
    "path",
    "file",
    "file_path",
    "filename",
    "target",
    "dest",
    "destination",
    "output",
)


@dataclass(frozen=True)
class ChangeEntry:
    """One backed-up change (seed fields, plus the step that made it)."""

    action: str
    """`modify` (a backup exists), `create` (undo deletes it) or `snapshot` (a hook's)."""
    resource_type: str
    resource_id: str
    backup_path: str | None
    timestamp: float
    step: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChangeEntry:
        return cls(
            action=str(data["action"]),
            resource_type=str(data["resource_type"]),
            resource_id=str(data["resource_id"]),
            backup_path=data.get("backup_path"),
            timestamp=float(data.get("timestamp") or 0.0),
            step=str(data.get("step") or ""),
        )


@dataclass(frozen=True)
class Snapshot:
    """What a snapshot hook saved: the resource and where its backup is."""

    resource_id: str
    backup_path: str | None


class SnapshotHook(Protocol):
    """Backs up and restores a non-file resource (a config, a record) for one kind of tool."""

    resource_type: str

    def snapshot(self, tool_name: str, arguments: Mapping[str, Any], backup_dir: Path) -> Snapshot:
        """Save the current state of what the call will change; return where it is."""
        ...

    def restore(self, entry: ChangeEntry) -> None:
        """Put the resource back as it was when `entry` was taken."""
        ...


@dataclass
class OperationSafety:
    """Where backups go and how non-file tools are snapshotted."""

    workspace: Path
    backup_dir: Path
    snapshot_hooks: Mapping[str, SnapshotHook] = field(default_factory=dict)
    """Tool name -> hook. Undo finds a hook by the entry's `resource_type`."""
    path_arguments: Sequence[str] = PATH_ARGUMENTS


@dataclass(frozen=True)
class UndoOutcome:
    entry: ChangeEntry
    ok: bool
    message: str


def classify_operation(tool: DeclaredTool, arguments: Mapping[str, Any]) -> OperationClass:
    """Read, write or destructive: the declared effect, sharpened by the arguments."""
    if tool.effect == "read" or arguments.get("dry_run") is True:
        return "read"
    if tool.effect == "destructive":
        return "destructive"
    for name in ACTION_ARGUMENTS:
        value = arguments.get(name)
        if isinstance(value, str) and value.strip().lower() in DESTRUCTIVE_ACTIONS:
            return "destructive"
    if any(arguments.get(flag) is True for flag in DESTRUCTIVE_FLAGS):
        return "destructive"
    return "write"


def before_operation(
    tool: DeclaredTool,
    arguments: Mapping[str, Any],
    safety: OperationSafety,
    *,
    step: str = "",
    now: float = 0.0,
) -> list[ChangeEntry]:
    """Back up what a write will change. An empty list means nothing could be backed up."""
    safety.backup_dir.mkdir(parents=True, exist_ok=True)
    hook = safety.snapshot_hooks.get(tool.name)
    if hook is not None:
        try:
            snap = hook.snapshot(tool.name, arguments, safety.backup_dir)
        except LoopwrightError:
            raise
        except Exception as exc:
            raise TaskRunError(f"snapshot before {tool.name!r} failed: {exc}") from exc
        return [
            ChangeEntry(
                "snapshot", hook.resource_type, snap.resource_id, snap.backup_path, now, step
            )
        ]
    entries = []
    for name in safety.path_arguments:
        value = arguments.get(name)
        if isinstance(value, str) and value:
            entries.append(_backup_path(value, safety, step=step, now=now))
    return entries


def _backup_path(value: str, safety: OperationSafety, *, step: str, now: float) -> ChangeEntry:
    try:
        target = resolve_in_workspace(safety.workspace, value)
    except LoopwrightError as exc:
        raise TaskRunError(f"cannot back up {value!r}: {exc}") from None
    special = special_kind(target)
    if special is not None:
        raise TaskRunError(f"cannot back up {value!r}: it is {special}, not a regular file")
    kind = "directory" if target.is_dir() else "file"
    if not target.exists():
        return ChangeEntry("create", "file", str(target), None, now, step)
    count = sum(1 for _ in safety.backup_dir.iterdir())
    backup = safety.backup_dir / f"{count:03d}-{target.name}"
    if kind == "directory":
        shutil.copytree(target, backup, symlinks=True)
    else:
        shutil.copy2(target, backup)
    return ChangeEntry("modify", kind, str(target), str(backup), now, step)


def execute_undo(change_log: Sequence[ChangeEntry], safety: OperationSafety) -> list[UndoOutcome]:
    """Restore every entry, newest first. One failed entry does not stop the others."""
    hooks = {hook.resource_type: hook for hook in safety.snapshot_hooks.values()}
    outcomes = []
    for entry in reversed(change_log):
        try:
            message = _undo_one(entry, hooks)
            outcomes.append(UndoOutcome(entry, True, message))
        except Exception as exc:
            outcomes.append(UndoOutcome(entry, False, f"{type(exc).__name__}: {exc}"))
    return outcomes


def _undo_one(entry: ChangeEntry, hooks: Mapping[str, SnapshotHook]) -> str:
    if entry.action == "snapshot":
        hook = hooks.get(entry.resource_type)
        if hook is None:
            raise TaskRunError(f"no snapshot hook restores {entry.resource_type!r} resources")
        hook.restore(entry)
        return f"restored {entry.resource_type} {entry.resource_id}"
    target = Path(entry.resource_id)
    if entry.action == "create":
        _remove(target)
        return f"removed {target} (created by the task)"
    if entry.backup_path is None or not Path(entry.backup_path).exists():
        raise TaskRunError(f"the backup of {target} is missing ({entry.backup_path})")
    _remove(target)
    if entry.resource_type == "directory":
        shutil.copytree(entry.backup_path, target, symlinks=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(entry.backup_path, target)
    return f"restored {target}"


def _remove(target: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
