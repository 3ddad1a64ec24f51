"""`loopwright config show`: each effective default and where it came from."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from loopwright.cli._options import add_options, opt
from loopwright.cli._output import print_json, print_records
from loopwright.config import SECTIONS, load_config, project_config_file, user_config_file
from loopwright.store import redact_url


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "config",
        help="show the defaults from loopwright.toml and LOOPWRIGHT_* and their sources",
        description="Defaults for run, serve and task come from, highest first: a flag, the "
        "environment (LOOPWRIGHT_<KEY>), loopwright.toml in this folder or the nearest parent "
        "that has one, loopwright.toml in the user config folder, the built-in value.",
    )
    sub = parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="each effective value and where it came from")
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


def show_command(args: argparse.Namespace) -> int:
    config = load_config()
    sections = [args.section] if args.section else list(SECTIONS)
    values = [value for section in sections for value in config.section(section)]
    project = project_config_file(Path.cwd())
    files = {
        "project": str(project) if project else None,
        "user": str(user_config_file()),
    }
    if args.json:
        records = [{**value.to_dict(), "value": _shown(value.value)} for value in values]
        print_json({"files": files, "values": records})
        return 0
    rows = [
        [
            f"{value.section}.{value.key}",
            json.dumps(_shown(value.value)),
            value.source + (f" ({value.origin})" if value.origin else ""),
        ]
        for value in values
    ]
    print_records(["key", "value", "source"], rows)
    return 0


def _shown(value: Any) -> Any:
    """A value as `config show` prints it: a URL's password (a store's, a base URL's) as
    `***`, never in plain text."""
    if isinstance(value, str) and "://" in value:
        return redact_url(value)
    return value
