"""The throwaway PostgreSQL server's port (store/_pg_local.py): drawn where the kernel hands
out no port to others, and when it was taken anyway as the server started (another program
chose it too), the server is started again on another one instead of failing the caller."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from loopwright._ports import ephemeral_range, server_port
from loopwright.errors import StoreError
from loopwright.store import start_local_postgres

pytestmark = pytest.mark.postgres

TAKEN_ONCE = """\
#!/bin/sh
echo x >> "{folder}/tries"
if [ "$(wc -l < "{folder}/tries")" -eq 1 ]; then  # as postgres says when its port is taken
    echo 'LOG:  could not bind IPv4 address "127.0.0.1": Address already in use' >&2
    echo 'FATAL:  could not create any TCP/IP sockets' >&2
    exit 1
fi
exec "{real}/postgres" "$@"
"""


@pytest.fixture
def port_taken_once(pg_bin: Path) -> Iterator[Path]:
    """A folder of PostgreSQL binaries whose `postgres` finds its port taken the first time
    (outside pytest's own folders: as root the server runs as `postgres`, who must reach
    it)."""
    pytest.importorskip("psycopg")
    real = pg_bin
    folder = Path(tempfile.mkdtemp(prefix="loopwright-pg-bin-"))
    try:
        folder.chmod(0o777)
        (folder / "initdb").symlink_to(real / "initdb")
        wrapper = folder / "postgres"
        wrapper.write_text(TAKEN_ONCE.format(folder=folder, real=real))
        wrapper.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_port_taken_as_the_server_starts_starts_it_on_another(port_taken_once: Path) -> None:
    server = start_local_postgres(port_taken_once)
    try:
        assert (port_taken_once / "tries").read_text() == "x\nx\n"  # failed once, then up
        low, high = ephemeral_range()
        assert not low <= server.port <= high  # drawn where the kernel hands out none
        with psycopg.connect(server.url()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        server.stop()
    assert not server.folder.exists()


def test_a_port_given_and_taken_is_the_error(port_taken_once: Path) -> None:
    """A port the caller chose is not changed behind its back."""
    with pytest.raises(StoreError, match="Address already in use"):
        start_local_postgres(port_taken_once, port=server_port())
    assert (port_taken_once / "tries").read_text() == "x\n"
