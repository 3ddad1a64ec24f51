"""What a server serves: the runtime (and through it the engine its runs execute on), who
may use it (tokens -> tenants), what runs may use."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from loopwright._net import is_loopback
from loopwright.errors import ConfigurationError
from loopwright.runtime import RunEngine, RunHandle, Runtime
from loopwright.store import RunStore
from loopwright.tools import BUILTIN_TOOLS, TenantToolThreads

if TYPE_CHECKING:
    from loopwright.agent import AgentExecutor

DEFAULT_TENANT = "default"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
TOOL_THREADS_PER_TENANT = 4
"""Threads each tenant's blocking (sync) tools may use on `loopwright serve`; stuck ones
fill only these."""


def server_runtime(store: RunStore, *, engine: RunEngine | None = None) -> Runtime:
    """The Runtime `loopwright serve` runs: each tenant's sync tools in a pool of its own of
    TOOL_THREADS_PER_TENANT threads (whatever starts or resumes the run)."""
    return Runtime(store, engine=engine, tool_threads=TenantToolThreads(TOOL_THREADS_PER_TENANT))


class TaskLauncher(Protocol):
    """Starts a task run from its name and inputs (server/_tasks.py: FolderTaskLauncher)."""

    def start_task(
        self,
        runtime: Runtime,
        task: str,
        inputs: dict[str, Any],
        *,
        tenant: str,
        model: str | None = None,
    ) -> RunHandle:
        """Start the run on the runtime's engine; an ApiError naming the field for a bad
        request."""
        ...

    def describe(self) -> list[dict[str, Any]]:
        """The tasks offered: name, description, inputs."""
        ...


@dataclass
class ServerConfig:
    runtime: Runtime = field(default_factory=Runtime)
    tokens: Mapping[str, str] | None = None
    """token -> tenant. None: no authentication, every request is tenant `default`."""
    allowed_tools: frozenset[str] = frozenset(BUILTIN_TOOLS)
    """Tool specs a request may name. Arbitrary `module:function` specs are not offered."""
    default_model: str = "local"
    allowed_hosts: frozenset[str] | None = LOOPBACK_HOSTS
    """Host names the server answers to (DNS rebinding); None: any (serving beyond loopback)."""
    follow_poll_s: float = 0.5
    """How often the store is read for a run another process executes (and appends to)."""
    allow_base_url: bool = False
    """Let requests give a model `base_url` (the server would connect wherever it says)."""
    allowed_models: frozenset[str] = frozenset()
    """Model specs a request may name besides `default_model` (`serve --allow-model`):
    exact specs, or `provider:*` patterns. A pattern never matches a `scripted:` spec nor
    one that looks like a path, so no client-chosen file is ever opened; a `scripted:`
    spec is allowed only when the operator names it exactly."""
    workspace: str | None = None
    tasks: TaskLauncher | None = None
    agent: AgentExecutor[Any, Any] | None = None
    """An agent built in code (`serve --agent`): every agent run the server starts runs it
    (a request then names no model or tools), and its runs are resumed with it."""
    workers_agent: str | None = None
    """With the Temporal engine, `serve --agent REF`: the agent built in Python of the
    workers started with `--agent REF`. Every agent run the server starts names it (a
    request then names no model or tools); the workers build it from their own agent."""

    def model_allowed(self, spec: str) -> bool:
        """May a request name the model `spec`? (The default model always may.)

        Exact entries; `provider:*` patterns for specs that are not paths; and
        `scripted:FOLDER/*`, which allows the scripted files inside FOLDER (after
        resolving links and `..`), for an operator who serves test scripts.
        """
        if spec == self.default_model or spec in self.allowed_models:
            return True
        if spec.startswith("scripted:"):
            return any(_inside_folder(spec, entry) for entry in self.allowed_models)
        if any(c in spec for c in "/\\~") or ".." in spec:
            return False  # a path: only an exact entry of the operator's allows it
        return any(
            entry.endswith("*")
            and not entry.startswith("scripted:")
            and spec.startswith(entry[:-1])
            for entry in self.allowed_models
        )

    def offered_models(self) -> list[str]:
        """What a refusal lists: not the operator's scripted files or folders."""
        offered = {self.default_model, *self.allowed_models}
        return sorted(m for m in offered if not m.startswith("scripted:"))


def _inside_folder(spec: str, entry: str) -> bool:
    if not (entry.startswith("scripted:") and entry.endswith("/*")):
        return False
    folder = os.path.realpath(entry.removeprefix("scripted:")[:-2])
    target = os.path.realpath(spec.removeprefix("scripted:"))
    return target.startswith(folder.rstrip(os.sep) + os.sep)


def load_token_file(path: str | Path) -> dict[str, str]:
    """Read a TOML token file: a `[tokens]` table mapping each token to its tenant."""
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigurationError(f"token file not found: {file}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{file}: not valid TOML: {exc}") from None
    table = data.get("tokens")
    if not isinstance(table, dict) or not table:
        raise ConfigurationError(f"{file}: needs a non-empty [tokens] table (token = tenant)")
    tokens: dict[str, str] = {}
    for token, tenant in table.items():
        if not isinstance(tenant, str) or not tenant.strip():
            raise ConfigurationError(f"{file}: tenant of a token must be a non-empty string")
        if len(token) < 8:
            raise ConfigurationError(f"{file}: token for {tenant!r} is shorter than 8 characters")
        tokens[token] = tenant.strip()
    return tokens


def check_bind(host: str, tokens: Mapping[str, str] | None) -> None:
    """Refuse to serve beyond loopback without tokens."""
    if not is_loopback(host) and not tokens:
        raise ConfigurationError(
            f"refusing to listen on {host} without tokens: pass --token-file "
            "(TOML with a [tokens] table) or bind to 127.0.0.1"
        )
