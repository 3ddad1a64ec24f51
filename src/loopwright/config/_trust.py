"""Which settings a project's `loopwright.toml` may give before the user trusts it.

A `loopwright.toml` found in the current folder or a parent comes with the repository the
user cloned, not from the user. Settings that run code or widen what a run may touch are
taken from it only once the user has trusted that file (`loopwright config trust`, as
git's `safe.directory`, direnv's `allow` and mise's `trust`): the file's SHA-256 is
recorded in the user config folder, so a changed file must be trusted again. Harmless
settings (the model, limits, output) apply without trust. The user's own config file, the
environment and the command line are the user's, and always apply.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import platformdirs

from loopwright.errors import ConfigurationError

TRUST_FILE_NAME = "trusted-projects.json"
TrustState = Literal["trusted", "changed", "untrusted"]


def trust_file() -> Path:
    """Where the trusted files' digests are kept: the user config folder."""
    return Path(platformdirs.user_config_dir("loopwright")) / TRUST_FILE_NAME


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _recorded() -> dict[str, str]:
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    trusted = data.get("trusted") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in trusted.items()} if isinstance(trusted, dict) else {}


def trust_state(path: Path) -> TrustState:
    """Whether the user trusted this file as it is now."""
    recorded = _recorded().get(str(path.resolve()))
    if recorded is None:
        return "untrusted"
    try:
        return "trusted" if recorded == digest(path) else "changed"
    except OSError:
        return "untrusted"


def record_trust(path: Path) -> str:
    """Trust `path` as it is now; its digest. Written atomically (a temporary file, then a
    rename), so a crash never leaves a half-written list."""
    try:
        value = digest(path)
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot read it to trust it: {exc}") from None
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


# --- which settings need trust, and why --------------------------------------------------


def _tools(value: Any, _: Path) -> str | None:
    names = [name.strip() for name in str(value or "").split(",") if name.strip()]
    if any(":" in name for name in names):
        return "it imports tool code"
    if "run_command" in names:
        return "it lets the model run programs"
    return None


def _allow_commands(value: Any, _: Path) -> str | None:
    return "it lets the model run programs" if value else None


def _inside(value: Any, project: Path) -> str | None:
    if value is None or value == "":
        return None
    text = str(value)
    if "://" in text:
        return "it names a server"
    if text == ":memory:":
        return None
    path = Path(text).expanduser()
    resolved = (path if path.is_absolute() else Path.cwd() / path).resolve()
    return None if resolved.is_relative_to(project) else "it is outside the project"


def _each_inside(value: Any, project: Path) -> str | None:
    paths = [part.strip() for part in str(value or "").split(",") if part.strip()]
    return next((why for why in (_inside(path, project) for path in paths) if why), None)


def _approve(value: Any, _: Path) -> str:
    return "it decides which tool calls wait for approval (yours would no longer apply)"


def _mcp_trusted(value: Any, _: Path) -> str | None:
    return (
        "it lets MCP servers' own annotations decide which calls wait for approval"
        if value
        else None
    )


def _otel(value: Any, _: Path) -> str | None:
    return "it sends the runs' traces to a collector" if value else None


def _server(value: Any, _: Path) -> str | None:
    return "it sends requests to a server the file names" if value else None


def _host(value: Any, _: Path) -> str | None:
    try:
        loopback = value in (None, "", "localhost") or ipaddress.ip_address(value).is_loopback
    except ValueError:
        loopback = False
    return None if loopback else "it serves beyond this machine"


def _token_file(value: Any, _: Path) -> str | None:
    return "it decides who may use the server" if value else None


_NEEDS_TRUST: dict[str, Callable[[Any, Path], str | None]] = {
    "tools": _tools,
    "allow_commands": _allow_commands,
    "workspace": _inside,
    "store": _inside,
    "state_dir": _inside,
    "tasks": _inside,
    "base_url": _server,
    "allow_base_url": _server,
    "temporal": _server,
    "approve": _approve,
    "mcp_trusted": _mcp_trusted,
    "secrets_file": _each_inside,
    "otel": _otel,
    "host": _host,
    "token_file": _token_file,
}
"""Key -> why its value needs trust (None: it does not). Keys not here are harmless."""


def needs_trust(key: str, value: Any, project: Path) -> str | None:
    """Why a project file's `key = value` needs the user's trust, or None."""
    check = _NEEDS_TRUST.get(key)
    return None if check is None else check(value, project)
