"""One Postgres run store shared by processes: a run executed by one process, followed live by
another, then listed and copied to a SQLite file.

    python examples/postgres_store.py [postgresql://user:password@host/db]

Without a URL it starts a throwaway local PostgreSQL server (Debian's binaries, `make
postgres`), removed at the end.

1. `loopwright store migrate --store URL` creates the store's schema (once per database).
2. `loopwright run ... --store URL` executes an agent run in a child process.
3. This process follows that run live from the store (`Runtime.follow`: woken by the
   append's NOTIFY), event by event, until its end.
4. `loopwright runs list --store URL` lists it; `loopwright store copy URL runs.db` copies it
   to a SQLite file, verified.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from loopwright.runtime import Runtime
from loopwright.store import open_store, redact_url, start_local_postgres

SCRIPT = Path(__file__).parent / "echo.json"
LOOPWRIGHT = [sys.executable, "-m", "loopwright"]


def cli(*args: str) -> str:
    done = subprocess.run([*LOOPWRIGHT, *args], capture_output=True, text=True, check=True)
    return done.stdout


async def follow(url: str, run_id: str) -> None:
    store = open_store(url)
    runtime = Runtime(store)  # only reads: the run executes in the other process
    try:
        async for event in runtime.follow(run_id):
            print(f"  followed: event {event.seq} {event.type}")
    finally:
        runtime.close()
        store.close()


def main(url: str) -> None:
    print(f"store: {redact_url(url)}")
    print(cli("store", "migrate", "--store", url).strip().replace(url, redact_url(url)))
    child = subprocess.Popen(
        [*LOOPWRIGHT, "run", "Say hello through the echo tool", "--model", f"scripted:{SCRIPT}",
         "--tools", "echo", "--store", url, "--json"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None
    run_id = json.loads(child.stdout.readline())["run_id"]  # its first event: run_started
    print(f"run {run_id} executes in process {child.pid}; following it from this one:")
    asyncio.run(follow(url, run_id))
    child.stdout.read()
    child.wait()
    listed = cli("runs", "list", "--store", url).splitlines()
    row = next(line for line in listed if run_id in line).split()
    print(f"runs list: {row[0]} {row[1]}")
    record = open_store(url).get_run(run_id)
    assert record is not None
    print(f"status {record.status}, answer {record.answer!r}")
    with tempfile.TemporaryDirectory() as folder:
        copied = cli("store", "copy", url, str(Path(folder) / "runs.db"))
        print(copied.splitlines()[0].replace(url, redact_url(url)).split(", from")[0])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        server = start_local_postgres()
        try:
            main(server.create_database("example"))
        finally:
            server.stop()
