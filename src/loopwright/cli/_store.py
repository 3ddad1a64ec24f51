"""`loopwright store migrate|copy`: create or upgrade a store's schema; copy runs between stores.

loopwright store migrate --store postgresql://app@db/runs
loopwright store copy runs.db postgresql://app@db/runs
"""

from __future__ import annotations

import argparse

from loopwright.cli._shared import add_store_argument, open_cli_store
from loopwright.store import PostgresRunStore
from loopwright.store._copy import copy_runs
from loopwright.store._open import store_location
from loopwright.store._pg_schema import PG_SCHEMA_VERSION
from loopwright.store._schema import SCHEMA_VERSION


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "store",
        help="create or upgrade a run store; copy runs",
        description="The store (default: $LOOPWRIGHT_STORE, else ~/.loopwright/runs.db) is "
        "a SQLite file or a postgresql:// URL.",
    )
    sub = parser.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    migrate = sub.add_parser(
        "migrate",
        help="create or upgrade the store's schema (Postgres: once, before any run uses it)",
    )
    add_store_argument(migrate)
    migrate.set_defaults(handler=migrate_command)
    copy = sub.add_parser(
        "copy", help="copy every run from one store to another, and verify the copy"
    )
    copy.add_argument("source", help="the store to copy from: a SQLite file or a postgresql:// URL")
    copy.add_argument("target", help="the store to copy into (a Postgres one must be migrated)")
    copy.add_argument(
        "--tenant",
        default=None,
        metavar="NAME",
        help="only this tenant's runs (default: every run)",
    )
    copy.set_defaults(handler=copy_command)


def migrate_command(args: argparse.Namespace) -> int:
    store = open_cli_store(args.store, migrate=True)
    try:
        latest = PG_SCHEMA_VERSION if isinstance(store, PostgresRunStore) else SCHEMA_VERSION
        before = store.migrated_from
        if before == latest:
            print(f"{store.path}: the store schema is up to date (v{latest})")
        else:
            print(f"{store.path}: store schema v{before} -> v{latest}")
    finally:
        store.close()
    return 0


def copy_command(args: argparse.Namespace) -> int:
    source = open_cli_store(store_location(args.source))
    try:
        target = open_cli_store(args.target)
        try:
            report = copy_runs(source, target, tenant=args.tenant)
        finally:
            target.close()
    finally:
        source.close()
    print(
        f"copied {len(report.copied)} run(s), {report.events} event(s), from {source.path} to "
        f"{target.path}; each read back the same (events, row, gate decisions)"
    )
    if report.already_there:
        print(f"{len(report.already_there)} run(s) were already there, the same: left as they are")
    if report.running:
        print(
            f"{len(report.running)} run(s) still executing, not copied (copy again once they "
            f"end): {', '.join(report.running)}"
        )
    return 0
