"""Every option of every subcommand: help text that names its default, grouped for `--help`.

An option with a config `key` takes its built-in default from `loopwright.config` and may be
set in `loopwright.toml` or `LOOPWRIGHT_<KEY>`; its parser default is None, and
`apply_config` fills it in after parsing (flag > environment > project file > user file >
built-in).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loopwright.config._load import load_config
from loopwright.config._schema import setting
from loopwright.safety.terminal import visible

GROUP_TITLES = {
    "model": "model",
    "tools": "tools",
    "guardrails": "guardrails",
    "task": "task",
    "decision": "decision",
    "server": "server",
    "filters": "filters",
    "secrets": "secrets",
    "store": "store",
    "engine": "engine",
    "output": "output",
}


@dataclass(frozen=True)
class Opt:
    flags: tuple[str, ...]
    help: str
    group: str
    key: str | None = None
    default: Any = None
    default_text: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


def opt(
    *flags: str,
    help: str,
    group: str,
    key: str | None = None,
    default: Any = None,
    default_text: str | None = None,
    **kwargs: Any,
) -> Opt:
    return Opt(tuple(flags), help, group, key, default, default_text, kwargs)


METAVARS = {
    "--after": "SEQ",
    "--limit": "N",
    "--timeout": "S",
    "--base-url": "URL",
    "--ollama-url": "URL",
    "--openai-url": "URL",
    "--anthropic-url": "URL",
    "--by": "NAME",
    "--client": "NAME",
    "--tenant": "NAME",
    "--task-queue": "NAME",
    "--model": "SPEC",
    "--only": "IDS",
    "--reason": "TEXT",
    "--request": "TEXT",
    "--state-dir": "DIR",
    "--workspace": "DIR",
    "--token-file": "PATH",
    "--output-schema": "PATH",
    "--host": "HOST",
    "--port": "PORT",
    "--tools": "TOOLS",
}
"""One word per kind of value, the same for every command: N (a count), S (seconds), PATH (a
file), DIR (a folder), URL, NAME, SPEC (a model spec), TEXT; a flag whose Opt names none
takes its word from here."""


def _default_text(option: Opt, section: str | None) -> str:
    if option.default_text is not None:
        return option.default_text
    if option.key is not None and section is not None:
        return setting(section, option.key).default_text
    action = option.kwargs.get("action")
    if action == "store_true":
        return "off"
    if option.default is None or option.default == [] or option.default == "":
        return "none"
    return str(option.default)


def add_options(
    parser: argparse.ArgumentParser, options: Sequence[Opt], section: str | None
) -> None:
    """Add `options` in titled groups (one group per title, however many calls add to it);
    config-backed ones are filled in by `apply_config`."""
    groups = {group.title: group for group in parser._action_groups if group.title}
    keys: dict[str, str] = dict(parser.get_default("config_keys") or {})
    for option in sorted(options, key=lambda o: list(GROUP_TITLES).index(o.group)):
        title = GROUP_TITLES[option.group]
        if title not in groups:
            groups[title] = parser.add_argument_group(title)
        text = f"{option.help} (default: {_default_text(option, section)}"
        kwargs = dict(option.kwargs)
        takes_value = kwargs.get("action") in (None, "append") and "choices" not in kwargs
        if takes_value and "metavar" not in kwargs and option.flags[0] in METAVARS:
            kwargs["metavar"] = METAVARS[option.flags[0]]
        if option.key is not None and section is not None:
            text += f"; config: {option.key}"
            kwargs["default"] = None
            item = setting(section, option.key)
            if item.choices and "choices" not in kwargs:
                kwargs["choices"] = item.choices
        else:
            kwargs.setdefault("default", option.default)
        action = groups[title].add_argument(*option.flags, help=text + ")", **kwargs)
        if option.key is not None and section is not None:
            keys[action.dest] = option.key
    if section is not None:
        parser.set_defaults(config_section=section, config_keys=keys)


def apply_config(args: argparse.Namespace) -> None:
    """Fill every config-backed option the command line left out, from the layers below."""
    section = getattr(args, "config_section", None)
    keys: dict[str, str] = getattr(args, "config_keys", None) or {}
    if section is None or not keys:
        return
    config = load_config()
    given = {key for dest, key in keys.items() if getattr(args, dest, None) not in (None, [])}
    for dest, key in keys.items():
        setattr(args, dest, config.resolve(section, key, getattr(args, dest, None)).value)
    line = config.project_line(section, set(keys.values()), given)  # which file applies, how
    if line is not None:
        print(visible(line), file=sys.stderr)


# ---- the option sets of each command -------------------------------------------------------

MODEL = opt("--model", help="model spec", group="model", key="model")
BASE_URL = opt("--base-url", help="server URL of the model provider", group="model", key="base_url")
THREADS = opt(
    "--threads",
    help="CPU threads of the embedded model (--model local...); recorded in its spec",
    group="model",
    type=int,
    metavar="N",
    default_text="LOOPWRIGHT_LOCAL_THREADS, else the cores free at each call",
)
TOOLS = opt(
    "--tools",
    help="comma-separated tools: built-in names, module:function or path/to/file.py:function",
    group="tools",
    key="tools",
)
WORKSPACE = opt("--workspace", help="root folder of the file tools", group="tools", key="workspace")
STORE = opt(
    "--store",
    help="SQLite file or Postgres URL",
    group="store",
    key="store",
    metavar="PATH",
)
JSON_EVENTS = opt(
    "--json", help="print one JSON event per line", group="output", action="store_true"
)
OTEL = opt(
    "--otel",
    help="OpenTelemetry traces to the OTLP collector of the standard OTEL_* variables "
    "(on by itself when OTEL_EXPORTER_OTLP_ENDPOINT is set; needs loopwright[otel])",
    group="output",
    key="otel",
    action="store_true",
    default=None,
)
TEMPORAL = opt(
    "--temporal",
    help="Temporal frontend HOST:PORT (with --engine temporal)",
    group="engine",
    key="temporal",
    metavar="HOST:PORT",
)
TEMPORAL_OF_RUN = Opt(
    TEMPORAL.flags,
    "Temporal frontend HOST:PORT, for a run on Temporal workers",
    TEMPORAL.group,
    TEMPORAL.key,
    kwargs=TEMPORAL.kwargs,
)
"""`--temporal` of a command that reaches a run (approve, follow): it has no `--engine`."""
TASK_QUEUE = opt(
    "--task-queue",
    help="Temporal task queue of the workers",
    group="engine",
    default_text="loopwright; a resumed run: the queue it ran on",
)
HEARTBEAT_TIMEOUT = opt(
    "--heartbeat-timeout",
    help="seconds a worker may go without a heartbeat from a running model or tool call "
    "before Temporal retries it elsewhere (with --engine temporal)",
    group="engine",
    type=float,
    metavar="S",
    default_text="30",
)
RESUME_ENGINE = opt(
    "--engine",
    help="the engine the run executes on (it is recorded: a different one is refused)",
    group="engine",
    choices=("embedded", "temporal"),
    default_text="the run's own",
)
ENGINE = opt(
    "--engine",
    help="where the run executes: embedded (this process) or temporal (a worker)",
    group="engine",
    key="engine",
    choices=("embedded", "temporal"),
    default="embedded",
)
SECRET = opt(
    "--secret",
    help="redact VALUE everywhere; repeatable",
    group="secrets",
    action="append",
    default=[],
    metavar="VALUE",
)
SECRETS_FILE = opt(
    "--secrets-file",
    help="redact every value in PATH (one per line, or NAME=value lines); repeatable",
    group="secrets",
    key="secrets_file",
    action="append",
    default=[],
    metavar="PATH",
)
MCP_TRUSTED = opt(
    "--mcp-trusted",
    help="an MCP server (as given to --mcp) whose tool annotations you trust: its read-only, "
    "destructive and idempotent hints then decide approvals and resume (any other server's "
    "tools count as unknown); repeatable",
    group="tools",
    key="mcp_trusted",
    action="append",
    default=[],
    metavar="SERVER",
)

AGENT = opt(
    "--agent",
    help="an agent built in Python: module:attribute or path/to/file.py:attribute (an "
    "AgentExecutor, or a function returning one); its model, tools and options are its own. "
    "With --engine temporal the workers started with the same --agent run it",
    group="model",
    key="agent",
    metavar="SPEC",
)
AGENT_AGAIN = opt(
    "--agent",
    help="a run of an agent built in Python: the same agent again (module:attribute or "
    "path/to/file.py:attribute)",
    group="model",
    metavar="SPEC",
)
AFTER_RUN = opt(
    "--after",
    help="a follow-up: continue the conversation of this ended run (a unique prefix of its "
    "id is enough); the new run gets the earlier turns first",
    group="store",
    dest="after",
    metavar="RUN_ID",
)

ALLOW_SKILL_COMMANDS = opt(
    "--allow-skill-commands",
    help="let the skill's !`command` lines run",
    group="tools",
    action="store_true",
)

TASK_RUN = (
    opt("--model", help="model spec for the agent steps", group="model", key="model"),
    BASE_URL,
    opt("--workspace", help="root folder of the file tools", group="tools", key="workspace"),
    opt("--match", help="choose the task in a folder by keywords", group="task", metavar="TEXT"),
    opt("--request", help="the user's request", group="task", default_text="the --match text"),
    opt(
        "--input",
        help="an input of the task, NAME=VALUE; repeatable",
        group="task",
        action="append",
        default=[],
        metavar="NAME=VALUE",
    ),
    opt(
        "--client",
        help="client (tenant) the task runs for",
        group="task",
        key="tenant",
        dest="client",
    ),
    opt("--yes", help="approve every gate", group="guardrails", action="store_true"),
    opt(
        "--gate-timeout",
        help="seconds a gate waits for a decision",
        group="guardrails",
        key="gate_timeout",
        type=float,
        metavar="S",
    ),
    opt(
        "--rollback-on-failure",
        help="undo the task's changes when a step fails",
        group="guardrails",
        key="rollback_on_failure",
        action="store_true",
        default=None,
    ),
    opt("--state-dir", help="folder of state files and backups", group="store", key="state_dir"),
    STORE,
    JSON_EVENTS,
    OTEL,
    ENGINE,
    TEMPORAL,
    TASK_QUEUE,
    HEARTBEAT_TIMEOUT,
)

SERVE = (
    opt("--host", help="address to listen on", group="server", key="host"),
    opt(
        "--port", help="port to listen on (0: any free port)", group="server", key="port", type=int
    ),
    opt(
        "--token-file",
        help="TOML file with a [tokens] table: token = tenant",
        group="server",
        key="token_file",
    ),
    opt(
        "--tasks", help="folder of task files to offer", group="server", key="tasks", metavar="DIR"
    ),
    opt("--model", help="default model spec for runs", group="model", key="model"),
    opt(
        "--allow-model",
        help="a model spec API requests may name besides --model (repeatable; 'ollama:*' "
        "allows a provider; a scripted: spec only when named exactly)",
        group="model",
        action="append",
        default=[],
        metavar="SPEC",
    ),
    opt(
        "--allow-base-url",
        help="let API requests name a model base_url",
        group="model",
        key="allow_base_url",
        action="store_true",
        default=None,
    ),
    opt("--workspace", help="root folder of the file tools", group="tools", key="workspace"),
    opt(
        "--agent",
        help="an agent built in Python, module:attribute or file.py:attribute (an "
        "AgentExecutor or a factory returning one): every agent run of the server runs it "
        "(with --engine temporal: on the workers started with the same --agent)",
        group="model",
        key="agent",
        metavar="SPEC",
    ),
    opt(
        "--store",
        help="run store: a SQLite file, a postgresql:// URL, or :memory: (keeps nothing)",
        group="store",
        key="store",
        metavar="PATH",
    ),
    OTEL,
    ENGINE,
    TEMPORAL,
    TASK_QUEUE,
    HEARTBEAT_TIMEOUT,
)
