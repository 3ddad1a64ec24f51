"""The user's trust in a project's `loopwright.toml`, recorded by the file's SHA-256.

A `loopwright.toml` found in the current folder or a parent comes with the repository the
user cloned, not from the user. Settings that pick code or data or weaken a protection
(config/_trust_rules.py) are taken from it only once the user has trusted that file
(`loopwright config trust`, as git's `safe.directory`, direnv's `allow` and mise's
`trust`): the file's SHA-256 is recorded in the user config folder under its real path, so
a changed file must be trusted again. A symbolic link or a file owned by another user is
never read (config/_project.py), so it can be neither trusted nor inherit a trust. The
user's own config file, the environment and the command line are the user's, and always
apply.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Literal

import platformdirs

from loopwright.config._project import read_project_file
from loopwright.errors import ConfigurationError

TRUST_FILE_NAME = "trusted-projects.json"
TrustState = Literal["trusted", "changed", "untrusted"]


def trust_file() -> Path:
    """Where the trusted files' digests are kept: the user config folder."""
    return Path(platformdirs.user_config_dir("loopwright")) / TRUST_FILE_NAME


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _recorded() -> dict[str, str]:
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    trusted = data.get("trusted") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in trusted.items()} if isinstance(trusted, dict) else {}


def trust_state(path: Path, data: bytes | None = None) -> TrustState:
    """Whether the user trusted this file as it is now (`data`: its bytes, as read)."""
    recorded = _recorded().get(str(path.resolve()))
    if recorded is None:
        return "untrusted"
    try:
        now = digest_of(data) if data is not None else digest(path)
    except OSError:
        return "untrusted"
    return "trusted" if recorded == now else "changed"


def record_trust(path: Path) -> str:
    """Trust `path` as it is now; its digest. A file a project file may not be (a symbolic
    link, another user's, not a regular file) is refused. Written atomically (a temporary
    file, then a rename), so a crash never leaves a half-written list."""
    try:
        found = read_project_file(path)
    except ConfigurationError as exc:
        raise ConfigurationError(f"cannot trust it: {exc}") from None
    if found.data is None:
        raise ConfigurationError(f"{path}: not trusting it: {found.refused}")
    value = digest_of(found.data)
    recorded = _recorded()
    recorded[str(path.resolve())] = value
    target = trust_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"trusted": dict(sorted(recorded.items()))}, indent=2) + "\n"
    handle, temporary = tempfile.mkstemp(prefix=".trusted-", dir=target.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(temporary, target)
    return value
