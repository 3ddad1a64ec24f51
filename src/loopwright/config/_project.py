"""A project's `loopwright.toml`: found, checked before it is read, its relative paths anchored.

The nearest `loopwright.toml` (the current folder, else the nearest parent that has one) is
the project file. It is read only when it is a regular file (not a symbolic link, a FIFO or
a device) owned by the user or by root, as git's `safe.directory` rule: a file another user
put in a shared parent folder is ignored whole, and no farther file is taken instead. Its
relative paths (tool files, the workspace, store, state folder, task folder, secrets and
token files, a scripted or local model's file) are made absolute against the file's own
folder, so the file means the same from every subfolder.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopwright.config._trust_rules import PACKAGED_LOCAL_MODELS
from loopwright.errors import ConfigurationError
from loopwright.paths import special_kind_of_mode

FILE_NAME = "loopwright.toml"
MAX_FILE_BYTES = 1 << 20
PATH_KEYS = ("workspace", "store", "state_dir", "tasks", "token_file")
"""Keys whose value is one path (a store may also be a URL or `:memory:`)."""


@dataclass(frozen=True)
class ProjectFile:
    """The project file found: its bytes, or why it is ignored whole."""

    path: Path
    data: bytes | None
    refused: str | None = None

    @property
    def folder(self) -> Path:
        """The file's real folder: its relative paths are resolved against it."""
        return self.path.parent.resolve()


def find_project_file(start: Path) -> Path | None:
    """`loopwright.toml` in `start` or the nearest parent folder that has one (whatever
    kind of file it is: a link or a FIFO is found, and then refused)."""
    for folder in (start, *start.parents):
        candidate = folder / FILE_NAME
        try:
            mode = candidate.lstat().st_mode
        except OSError:
            continue
        if not stat.S_ISDIR(mode):
            return candidate
    return None


def read_project_file(path: Path) -> ProjectFile:
    """The project file's bytes, or why it is not read. A file that cannot be read at all
    is a ConfigurationError, as any bad config file is."""
    try:
        found = path.lstat()
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot read the config file: {exc}") from None
    if stat.S_ISLNK(found.st_mode):
        return ProjectFile(path, None, "it is a symbolic link (use the file it points to)")
    refused = _refusal(found)  # checked before opening: a device is never opened
    if refused is not None:
        return ProjectFile(path, None, refused)
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:  # ELOOP: it became a link since
        raise ConfigurationError(f"{path}: cannot read the config file: {exc}") from None
    with os.fdopen(handle, "rb") as file:
        refused = _refusal(os.fstat(file.fileno()))  # what was opened, if it was swapped
        if refused is not None:
            return ProjectFile(path, None, refused)
        return ProjectFile(path, _bounded(file, path))


def read_config_bytes(path: Path) -> bytes:
    """A config file's bytes (the user's own): a regular file, at most MAX_FILE_BYTES."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot read the config file: {exc}") from None
    with os.fdopen(handle, "rb") as file:
        mode = os.fstat(file.fileno()).st_mode
        if not stat.S_ISREG(mode):
            kind = special_kind_of_mode(mode) or "a folder"
            raise ConfigurationError(f"{path}: not a regular file ({kind})")
        return _bounded(file, path)


def _refusal(info: os.stat_result) -> str | None:
    if not stat.S_ISREG(info.st_mode):
        return f"it is {special_kind_of_mode(info.st_mode) or 'a folder'}, not a regular file"
    if info.st_uid not in (os.geteuid(), 0):
        return f"it is owned by {_user(info.st_uid)}, not by you or root"
    return None


def _user(uid: int) -> str:
    import pwd

    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _bounded(file: Any, path: Path) -> bytes:
    try:
        data: bytes = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot read the config file: {exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigurationError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
    return data


# --- relative paths ----------------------------------------------------------------------


def anchor_paths(key: str, value: Any, folder: Path) -> Any:
    """`value` of `key` with its relative paths made absolute against `folder`."""
    if not isinstance(value, str) or not value:
        return value
    if key in PATH_KEYS:
        return _anchor(value, folder)
    if key == "secrets_file":
        return ",".join(_anchor(part.strip(), folder) for part in value.split(","))
    if key == "tools":
        return ",".join(_anchor_tool(part.strip(), folder) for part in value.split(","))
    if key == "agent":  # file.py:attribute, as a tool file
        return _anchor_tool(value.strip(), folder)
    if key == "model":
        return _anchor_model(value, folder)
    return value


def _anchor(text: str, folder: Path) -> str:
    if not text or "://" in text or text == ":memory:" or text.startswith("~"):
        return text
    return text if Path(text).is_absolute() else str(folder / text)


def _anchor_tool(spec: str, folder: Path) -> str:
    target, sep, function = spec.rpartition(":")
    if sep and target.endswith(".py"):
        return f"{_anchor(target, folder)}:{function}"
    return spec


def _anchor_model(spec: str, folder: Path) -> str:
    prefix, sep, name = spec.partition(":")
    provider = prefix.partition("?")[0]
    if not sep or provider not in ("scripted", "local"):
        return spec
    if provider == "scripted":
        return f"{prefix}:{_anchor(name, folder)}"
    file, mark, options = name.partition("?")
    if file in PACKAGED_LOCAL_MODELS:
        return spec
    return f"{prefix}:{_anchor(file, folder)}{mark}{options}"
