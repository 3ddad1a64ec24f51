"""examples/postgres_store.py runs as documented: one process executes the run, another follows
it live from the Postgres store, then it is listed and copied to SQLite."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from loopwright.store import LocalPostgres

EXAMPLE = Path(__file__).parents[2] / "examples" / "postgres_store.py"


def test_the_postgres_example_runs(pg_server: LocalPostgres) -> None:
    url = pg_server.create_database("example")
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), url], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"store schema v0 -> v[1-9]", out)  # a new database, migrated
    followed = [line.split()[2] for line in out.splitlines() if "followed: event" in line]
    assert followed == [str(n) for n in range(1, 9)]
    assert "followed: event 8 run_finished" in out
    assert "status completed, answer 'The echo tool said: hello'" in out
    assert "copied 1 run(s), 8 event(s)" in out
    assert pg_server.password not in out + done.stderr
