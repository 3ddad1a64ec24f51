"""The settings a `loopwright.toml` may hold: per command section, with type and built-in value.

Sections are `[run]`, `[serve]`, `[task]` and `[worker]`; the keys every section shares
(`SHARED_KEYS`) may also sit at the top of the file, as defaults for every section.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["str", "int", "float", "bool", "list"]


@dataclass(frozen=True)
class Setting:
    """One configurable value: its key, type, built-in default and what it means."""

    key: str
    kind: Kind
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    shown: str | None = None
    """How the built-in default reads in `--help` when the value itself says nothing (None)."""
    minimum: float | None = None

    @property
    def default_text(self) -> str:
        if self.shown is not None:
            return self.shown
        if self.default is None or self.default == "":
            return "none"
        if isinstance(self.default, bool):
            return "on" if self.default else "off"
        return str(self.default)


def _s(key: str, kind: Kind, default: Any, help: str, **more: Any) -> Setting:
    return Setting(key, kind, default, help, **more)


_MODEL = _s(
    "model",
    "str",
    None,
    "model spec: local, local:small, ollama:NAME, openai:NAME, anthropic:NAME, scripted:FILE",
    shown="local",
)
_BASE_URL = _s("base_url", "str", None, "server URL of the model provider", shown="the provider's")
_STORE = _s("store", "str", None, "run store file (SQLite)", shown="~/.loopwright/runs.db")
_TENANT = _s("tenant", "str", "default", "tenant (client) the runs belong to")
_ENGINE = _s(
    "engine",
    "str",
    "embedded",
    "where runs execute: embedded (this process) or temporal (a worker)",
    choices=("embedded", "temporal"),
)
_TEMPORAL = _s("temporal", "str", None, "Temporal frontend HOST:PORT (with engine temporal)")
_OTEL = _s(
    "otel", "bool", False, "OpenTelemetry traces to the OTLP collector of the OTEL_* variables"
)
_SECRETS_FILE = _s(
    "secrets_file",
    "list",
    "",
    "files whose values are redacted everywhere (one per line, or NAME=value lines)",
)

RUN = (
    _MODEL,
    _BASE_URL,
    _s("tools", "list", "", "tools: built-in names, module:function or path/to/file.py:function"),
    _s("workspace", "str", None, "root folder of the file tools", shown="."),
    _s(
        "tool_mode",
        "str",
        None,
        "how tools reach the model",
        choices=("native", "prompted"),
        shown="the model's own preference",
    ),
    _s("allow_commands", "bool", False, "let the tools include run_command (runs programs)"),
    _s(
        "tier",
        "str",
        "standard",
        "iteration limit by size: trivial 5, standard 10, complex 20",
        choices=("trivial", "standard", "complex"),
    ),
    _s("max_iterations", "int", None, "iteration limit", shown="from --tier", minimum=1),
    _s(
        "timeout",
        "float",
        None,
        "wall clock for the whole run, seconds; 0 turns it off",
        minimum=0,
        shown="1800 (30 min) for a run with tools, 600 (10 min) for a run without",
    ),
    _s("iteration_timeout", "float", None, "wall clock for one iteration, seconds", minimum=0),
    _s("max_tokens_total", "int", None, "token budget of the run (input + output)", minimum=1),
    _s("max_cost", "float", None, "cost budget of the run, USD", minimum=0),
    _s("repetition_threshold", "int", 3, "stop after this many identical tool calls", minimum=1),
    _s(
        "last_turn",
        "bool",
        True,
        "the last call the iteration limit allows, and one after a repetition or no-progress "
        "stop, ask for the final answer (no tools)",
    ),
    _s(
        "no_progress_limit", "int", 5, "stop after this many iterations without progress", minimum=1
    ),
    _s(
        "context_window",
        "int",
        None,
        "tokens the model sees; older turns are trimmed",
        shown="the model's",
        minimum=1,
    ),
    _s(
        "approve",
        "list",
        "",
        "tool names or effects (destructive, write, ...) whose calls wait for approval; "
        "* for every call",
    ),
    _s(
        "mcp_trusted",
        "list",
        "",
        "MCP servers (as given to --mcp) whose tool annotations decide approvals and resume",
    ),
    _TENANT,
    _STORE,
    _SECRETS_FILE,
    _ENGINE,
    _TEMPORAL,
    _OTEL,
)
SERVE = (
    _s("host", "str", "127.0.0.1", "address to listen on"),
    _s("port", "int", 8765, "port to listen on (0: any free port)", minimum=0),
    _s(
        "token_file",
        "str",
        None,
        "TOML file with a [tokens] table: token = tenant",
        shown="none (loopback only)",
    ),
    _s("tasks", "str", None, "folder of task files the API and dashboard offer"),
    _s("model", "str", "local", _MODEL.help),
    _s("workspace", "str", ".", "root folder of the file tools"),
    _s("allow_base_url", "bool", False, "let API requests name a model base_url"),
    _s(
        "agent",
        "str",
        None,
        "an agent built in Python (module:attribute or file.py:attribute: an AgentExecutor "
        "or a factory returning one) that every agent run of the server runs",
        shown="none (runs are built from each request)",
    ),
    _s(
        "store",
        "str",
        None,
        "run store: a SQLite file, a postgresql:// URL, or :memory: (keeps nothing)",
        shown="~/.loopwright/runs.db",
    ),
    _ENGINE,
    _TEMPORAL,
    _OTEL,
)
TASK = (
    _s("model", "str", None, "model spec for the agent steps", shown="none (no agent steps)"),
    _BASE_URL,
    _s("workspace", "str", ".", "root folder of the file tools"),
    _s("tenant", "str", "default", "client (tenant) the task runs for"),
    _s("state_dir", "str", "~/.loopwright", "folder of state files and backups"),
    _s("gate_timeout", "float", 300.0, "seconds a gate waits for a decision", minimum=0),
    _s("rollback_on_failure", "bool", False, "undo the task's changes when a step fails"),
    _STORE,
    _ENGINE,
    _TEMPORAL,
    _OTEL,
)
WORKER = (
    _s("temporal", "str", None, "Temporal frontend HOST:PORT"),
    _s(
        "store",
        "str",
        None,
        "the run store shared with the commands that start runs: a postgresql:// URL",
        shown="none: a postgresql:// URL is needed",
    ),
    _s("task_queue", "str", "loopwright", "Temporal task queue to poll"),
    _SECRETS_FILE,
    _s(
        "max_cached_workflows",
        "int",
        None,
        "workflows kept in memory between their tasks; 0: replay each from its history "
        "every time (a determinism check)",
        shown="Temporal's own, 1000",
        minimum=0,
    ),
    _s(
        "graceful_timeout",
        "float",
        30.0,
        "on SIGTERM or Ctrl-C, seconds in-flight model and tool calls may take to finish",
        minimum=0,
    ),
    _s(
        "sticky_timeout",
        "float",
        10.0,
        "seconds a run's next workflow task waits for this worker (which holds the run in "
        "memory) before any worker of the queue takes it: how long its runs wait if it dies",
        minimum=0.001,
    ),
)
SECTIONS: dict[str, tuple[Setting, ...]] = {
    "run": RUN,
    "serve": SERVE,
    "task": TASK,
    "worker": WORKER,
}
SHARED_KEYS = ("model", "base_url", "store", "tenant", "workspace")
"""Keys allowed at the top of the file: a default for every section that has them."""
ENV_PREFIX = "LOOPWRIGHT_"


def setting(section: str, key: str) -> Setting:
    for item in SECTIONS[section]:
        if item.key == key:
            return item
    raise KeyError(f"{section}.{key}")


def env_name(key: str) -> str:
    return ENV_PREFIX + key.upper()


_KIND_WORDS = {
    "str": "text",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "list": "a list of text (or comma-separated text)",
}


class BadValue(ValueError):
    """A value of the wrong type or out of range; the caller adds where it came from."""


def check_value(item: Setting, value: Any, *, from_text: bool = False) -> Any:
    """`value` converted to the setting's type (text from the environment is parsed)."""
    if from_text:
        value = _from_text(item, str(value))
    converted = _convert(item, value)
    if item.choices and converted is not None and converted not in item.choices:
        raise BadValue(f"{converted!r} is not one of: {', '.join(item.choices)}")
    if item.minimum is not None and isinstance(converted, int | float):
        if isinstance(converted, float) and not math.isfinite(converted):
            raise BadValue(f"{converted!r} is not a finite number")
        if converted < item.minimum:
            raise BadValue(f"{converted!r} is below the minimum {item.minimum:g}")
    return converted


def _from_text(item: Setting, text: str) -> Any:
    try:
        if item.kind == "int":
            return int(text)
        if item.kind == "float":
            return float(text)
    except ValueError:
        raise BadValue(f"expected {_KIND_WORDS[item.kind]}, got {text!r}") from None
    if item.kind == "bool":
        lowered = text.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off", ""}:
            return False
        raise BadValue(f"expected {_KIND_WORDS['bool']}, got {text!r}")
    return text


def _convert(item: Setting, value: Any) -> Any:
    wrong = BadValue(f"expected {_KIND_WORDS[item.kind]}, got {value!r}")
    if item.kind == "bool":
        if not isinstance(value, bool):
            raise wrong
        return value
    if item.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong
        return value
    if item.kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise wrong
        return float(value)
    if item.kind == "list":
        if isinstance(value, str):
            return ",".join(part.strip() for part in value.split(",") if part.strip())
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return ",".join(v.strip() for v in value if v.strip())
        raise wrong
    if not isinstance(value, str):
        raise wrong
    return value
