"""A command loopwright prints for the user to copy works as pasted: a PostgreSQL store's
password is never in it, and never masked as `***` either (a masked URL cannot log in)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from store_locations import new_database

from loopwright.store import LocalPostgres

pytestmark = pytest.mark.subprocess

SRC = Path(__file__).resolve().parents[2] / "src"
MIGRATE = re.compile(r"`(loopwright store migrate [^`]*)`")


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOPWRIGHT_", "PG"))}
    env.update(PYTHONPATH=str(SRC), HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def _shell(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`command` as the user's shell runs it when pasted."""
    return subprocess.run(["sh", "-c", command], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip


def _printed_migrate(env: dict[str, str], cwd: Path, *store: str) -> str:
    listed = _shell(" ".join(["loopwright", "runs", "list", *store]), env, cwd)
    assert listed.returncode == 2, listed.stderr
    assert "no loopwright run store yet" in listed.stderr
    found = MIGRATE.search(listed.stderr)
    assert found is not None, listed.stderr
    return found.group(1)


def test_a_store_from_the_environment_is_named_by_its_variable(
    pg_server: LocalPostgres, tmp_path: Path
) -> None:
    url = new_database(pg_server, migrate=False)
    env = _env(tmp_path, LOOPWRIGHT_STORE=url)
    command = _printed_migrate(env, tmp_path)
    assert command == 'loopwright store migrate --store "$LOOPWRIGHT_STORE"'
    pasted = _shell(command, env, tmp_path)
    assert pasted.returncode == 0, pasted.stderr
    assert _shell("loopwright runs list", env, tmp_path).stdout.strip() == "no runs"


def test_a_store_given_by_flag_is_printed_without_its_password(
    pg_server: LocalPostgres, tmp_path: Path
) -> None:
    url = new_database(pg_server, migrate=False)
    env = _env(tmp_path, LOOPWRIGHT_STORE=str(tmp_path / "runs.db"))
    command = _printed_migrate(env, tmp_path, "--store", f"'{url}'")
    assert pg_server.password not in command and "***" not in command
    without = url.replace(f":{pg_server.password}@", "@")
    assert command == f"loopwright store migrate --store {without}"
    # the PostgreSQL client reads the password from PGPASSWORD (or ~/.pgpass)
    pasted = _shell(command, {**env, "PGPASSWORD": pg_server.password}, tmp_path)
    assert pasted.returncode == 0, pasted.stderr
    listed = _shell(f"loopwright runs list --store '{url}'", env, tmp_path)
    assert listed.stdout.strip() == "no runs", listed.stderr
