"""`loopwright config show|trust`: each effective default, where it came from and whether its
file is trusted; trusting a project's loopwright.toml."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from loopwright.cli._options import add_options, opt
from loopwright.cli._output import print_json, print_records
from loopwright.config._load import (
    Config,
    Resolved,
    load_config,
    project_config_file,
    user_config_file,
)
from loopwright.config._project import FILE_NAME
from loopwright.config._schema import SECTIONS, setting
from loopwright.config._trust import record_trust
from loopwright.errors import ConfigurationError
from loopwright.store import redact_url

TRUST_HELP = (
    "A project's loopwright.toml (this folder or the nearest parent that has one) is read "
    "only when it is a regular file owned by you or root, and its relative paths follow its "
    "own folder. Its settings that pick code or data or weaken a protection (tool files, "
    "run_command, file-changing tools, allow_commands, another model, store, tenant, state "
    "folder, task folder, secrets file, token file or task queue, a workspace outside the "
    "project, base_url, temporal, otel, an approve list without yours, a looser limit, a "
    "public host) apply only once you trust it: its SHA-256 is recorded in the user config "
    "folder, and a changed file needs trusting again. The rest applies without trust."
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "config",
        help="show the defaults from loopwright.toml and LOOPWRIGHT_* and their sources; trust "
        "a project's loopwright.toml",
        description="Defaults for run, serve, task and worker come from, highest first: a "
        "flag, the environment (LOOPWRIGHT_<KEY>), loopwright.toml in this folder or the "
        "nearest parent that has one, loopwright.toml in the user config folder, the built-in "
        "value. " + TRUST_HELP,
    )
    sub = parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="each effective value, where it came from, and trust")
    add_options(
        show,
        [
            opt(
                "--section",
                help="only this section",
                group="filters",
                choices=list(SECTIONS),
                default_text="every section",
            ),
            opt("--json", help="print one JSON document", group="output", action="store_true"),
        ],
        None,
    )
    show.set_defaults(handler=show_command)
    trust = sub.add_parser(
        "trust", help="trust a project's loopwright.toml", description=TRUST_HELP
    )
    trust.add_argument(
        "file",
        nargs="?",
        help=f"the file (default: the {FILE_NAME} this folder's commands read)",
    )
    trust.set_defaults(handler=trust_command)


def trust_command(args: argparse.Namespace) -> int:
    path = Path(args.file) if args.file else project_config_file(Path.cwd().resolve())
    if path is None:
        raise ConfigurationError(f"no {FILE_NAME} in this folder or a parent to trust")
    if not path.is_file():
        raise ConfigurationError(f"{path}: no such file")
    digest = record_trust(path)
    print(f"trusted {path.resolve()} (sha256 {digest[:16]}…); a change needs trusting again")
    return 0


def _trust_of(config: Config) -> str | None:
    if config.project is None:
        return None
    return config.project_state


def show_command(args: argparse.Namespace) -> int:
    config = load_config()
    sections = [args.section] if args.section else list(SECTIONS)
    values = [value for section in sections for value in config.section(section)]
    ignored = [i for i in config.ignored if i.section in ("", *sections)]
    files = {
        "project": str(config.project) if config.project else None,
        "project_trust": _trust_of(config),
        "project_refused": config.refused,
        "user": str(user_config_file()),
    }
    if args.json:
        records = [
            {**_record(value, config), "value": _shown(value.value), "in_effect": _unset(value)}
            for value in values
        ]
        left_out = [
            {"key": i.label, "origin": i.origin, "reason": i.reason} for i in ignored
        ]  # fmt: skip
        print_json({"files": files, "values": records, "ignored": left_out})
        return 0
    rows = [
        [f"{value.section}.{value.key}", _in_effect(value), _source(value, config)]
        for value in values
    ]
    rows += [
        [i.label, "(ignored)", f"project file ({i.origin}), not trusted: {i.reason}"]
        for i in ignored
    ]
    print_records(["key", "value", "source"], rows)
    if config.project is not None and config.refused is not None:
        print(f"{config.project}: ignored: {config.refused}")
    elif config.project is not None and config.project_state != "trusted":
        state = "changed since it was trusted" if config.project_state == "changed" else "untrusted"
        print(f"{config.project}: {state}; `loopwright config trust` to use every setting in it")
    return 0


def _record(value: Resolved, config: Config) -> dict[str, Any]:
    """A value's JSON record; `trusted`: whether its file is trusted (None: not from a file
    that needs trust: a flag, the environment, the user's own file, the built-in value)."""
    record = value.to_dict()
    in_project = value.source == "project file"
    record["trusted"] = config.project_state == "trusted" if in_project else None
    return record


def _source(value: Resolved, config: Config) -> str:
    text = value.source + (f" ({value.origin})" if value.origin else "")
    if value.source == "project file":
        trusted = config.project_state == "trusted"
        text += ", trusted" if trusted else ", file not trusted (this one applies: harmless)"
    return text


def _in_effect(value: Resolved) -> str:
    """The value as it applies, as plain text whatever its type or source (`ollama:qwen3:8b`
    as `local` is: no quotes around some strings only); a built-in left unset says what
    takes its place (`local`, ~/.loopwright/runs.db, the wall clock's rule), not `null`.
    `--json` gives each value with its type."""
    unset = _unset(value)
    if unset is not None:
        return unset
    shown = _shown(value.value)
    return shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)


def _unset(value: Resolved) -> str | None:
    """What applies where a setting has no value (None when it has one)."""
    if value.value is None or value.value == "":
        return setting(value.section, value.key).default_text
    return None


def _shown(value: Any) -> Any:
    """A value as `config show` prints it: a URL's password (a store's, a base URL's) as
    `***`, never in plain text."""
    if isinstance(value, str) and "://" in value:
        return redact_url(value)
    return value
