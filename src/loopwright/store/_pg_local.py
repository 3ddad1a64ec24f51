"""A throwaway PostgreSQL server: initdb in a temporary folder, a free port on 127.0.0.1, no
Unix socket, password authentication, removed by `stop()`. The test suite, the benchmark and
the fixture script start one; it is also a quick way to try the Postgres store.

Nothing is left behind when the process that started it is killed (SIGKILL included): the
server gets SIGINT from Linux when its parent dies, and a small watcher process, started
with the folder, deletes the folder once the server has stopped (it waits for its parent's
end on a pipe: an end of file comes however the parent ends).

The server binaries come from Debian's `postgresql` package (`make postgres` installs it),
which puts them in /usr/lib/postgresql/VERSION/bin, not on PATH. PostgreSQL refuses to run
as root: as root the server runs as the package's `postgres` user.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopwright._ports import BIND_ATTEMPTS, bind_failed, server_port
from loopwright.errors import StoreError

PG_BIN_ENV = "LOOPWRIGHT_PG_BIN"
SUPERUSER = "loopwright"
START_TIMEOUT_S = 30.0
PR_SET_PDEATHSIG = 1


def find_pg_bin() -> Path | None:
    """The folder holding initdb and postgres: $LOOPWRIGHT_PG_BIN when set (and only it),
    else Debian's newest /usr/lib/postgresql/*/bin, else PATH; None if there is none."""
    chosen = os.environ.get(PG_BIN_ENV)
    if chosen:
        given = Path(chosen)
        return given if (given / "initdb").exists() and (given / "postgres").exists() else None
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
        reverse=True,
    )
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).resolve().parent))
    for folder in candidates:
        if (Path(folder) / "initdb").exists() and (Path(folder) / "postgres").exists():
            return Path(folder)
    return None


def free_port() -> int:
    """A port drawn for a server to bind (loopwright._ports: never one the kernel hands
    out to others in the meantime)."""
    return server_port()


@dataclass
class LocalPostgres:
    """A running server; `url()` connects as its superuser (with the password)."""

    bin: Path
    folder: Path
    port: int
    password: str
    process: subprocess.Popen[bytes]
    log: Path
    databases: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    """The server's command line (to start it again after `pause`)."""
    remover: subprocess.Popen[bytes] | None = None
    """The watcher that deletes the folder if this process dies without `stop()`."""

    def url(self, database: str = "postgres", *, password: str | None = None) -> str:
        secret = self.password if password is None else password
        return f"postgresql://{SUPERUSER}:{secret}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self.databases.append(name)
        return self.url(name)

    def pause(self) -> None:
        """Shut the server down (its clients are disconnected), keeping its data: an
        outage, until `resume`."""
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=30)

    def resume(self) -> None:
        """Start the paused server again on the same port and data."""
        self.process = _spawn(self.command, self.log)
        _wait_until_ready(self)

    def stop(self, *, keep: bool = False) -> None:
        """Stop the server and delete its folder (`keep`: leave it, to read its log)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # "fast" shutdown: clients are disconnected
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not keep:
            shutil.rmtree(self.folder, ignore_errors=True)
        _let_go(self.remover, keep=keep)
        self.remover = None


_REMOVE_WHEN_STOPPED = """\
import os, shutil, sys, time
folder, pid_file = sys.argv[1], sys.argv[2]
if sys.stdin.buffer.read() == b"keep":  # the starter stopped it and keeps the folder
    sys.exit(0)
deadline = time.monotonic() + 60
while os.path.exists(pid_file) and time.monotonic() < deadline:
    time.sleep(0.1)  # the server shuts down (SIGINT when its parent died)
shutil.rmtree(folder, ignore_errors=True)
"""


def _remover(folder: Path) -> subprocess.Popen[bytes]:
    """The watcher that deletes `folder` once the server stopped, when this process ends
    without `stop()` (killed): it reads its stdin, this process's pipe, to the end."""
    pid_file = folder / "data" / "postmaster.pid"  # there while the server runs
    return subprocess.Popen(
        [sys.executable, "-I", "-c", _REMOVE_WHEN_STOPPED, str(folder), str(pid_file)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,  # a Ctrl-C in the terminal is for the server's starter
    )  # fmt: skip


def _let_go(remover: subprocess.Popen[bytes] | None, *, keep: bool) -> None:
    """End the watcher: the folder is already deleted, or is to be kept."""
    if remover is None or remover.stdin is None:
        return
    with contextlib.suppress(OSError):
        if keep:
            remover.stdin.write(b"keep")
        remover.stdin.close()
    try:
        remover.wait(timeout=10)
    except subprocess.TimeoutExpired:
        remover.kill()
        remover.wait()


def _stop_with_parent() -> None:
    """In the server's process before it starts: on Linux, a fast shutdown (SIGINT) when the
    process that started it dies, so a test run killed midway leaves no server behind.
    (Linux watches the thread that started it: start it from one that lives as long.)"""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGINT)


def _as_server_user() -> dict[str, Any]:
    """subprocess arguments that run a command as `postgres` when we are root."""
    if os.geteuid() != 0:
        return {}
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise StoreError(
            "PostgreSQL refuses to run as root and there is no `postgres` user to run it as: "
            "install Debian's postgresql package (`make postgres`) or run as another user"
        ) from None
    return {"user": "postgres", "group": "postgres", "extra_groups": []}


NO_BINARIES = (
    "no PostgreSQL server binaries (initdb and postgres): install PostgreSQL's server "
    "(Debian, Ubuntu: apt-get install postgresql; in loopwright's repository: make postgres) "
    f"or set {PG_BIN_ENV} to the folder that holds them"
)


def start_local_postgres(
    bin_dir: Path | None = None,
    *,
    settings: dict[str, str] | None = None,
    port: int | None = None,
) -> LocalPostgres:
    """initdb, start, wait until it accepts connections. StoreError if it cannot.
    `settings` override the server's (the benchmark turns fsync back on); `port` on
    127.0.0.1 (default: one drawn for it, and another when it was taken as the server
    started: loopwright._ports)."""
    found = bin_dir or find_pg_bin()
    if found is None:
        raise StoreError(NO_BINARIES)
    folder = Path(tempfile.mkdtemp(prefix="loopwright-pg-"))
    remover = _remover(folder)
    try:
        server = _start_in(found, folder, settings, port)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        _let_go(remover, keep=False)
        raise
    server.remover = remover
    for _attempt in range(1, BIND_ATTEMPTS):
        if port or not _lost_its_port(server):
            break
        server.port = server_port()  # another program took it as the server started
        server.command = [*server.command[:-1], f"port={server.port}"]
        server.process = _spawn(server.command, server.log)
    _wait_until_ready(server)
    return server


def _lost_its_port(server: LocalPostgres) -> bool:
    """Wait until the server accepts connections (False) or exits; True when it exited
    because its port was taken (its log says so; the log is emptied for the next try)."""
    try:
        _wait_until_ready(server, stop_on_failure=False)
    except StoreError:
        exited = server.process.poll() is not None and server.log.exists()
        if exited and bind_failed(server.log.read_text(errors="replace")):
            server.log.unlink()
            return True
        server.stop()
        raise
    return False


def _start_in(
    found: Path, folder: Path, settings: dict[str, str] | None, port: int | None
) -> LocalPostgres:
    """initdb in `folder`, then the server started (not yet ready)."""
    as_user = _as_server_user()
    if as_user:
        shutil.chown(folder, "postgres", "postgres")
    password = secrets.token_hex(12)
    pwfile = folder / "pw"
    pwfile.write_text(password + "\n")
    if as_user:
        shutil.chown(pwfile, "postgres", "postgres")
    data = folder / "data"
    subprocess.run(
        [str(found / "initdb"), "-D", str(data), "-U", SUPERUSER, f"--pwfile={pwfile}",
         "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"],
        check=True, capture_output=True, **as_user,
    )  # fmt: skip
    pwfile.unlink()
    port = port or free_port()
    log = folder / "server.log"
    config = {
        "listen_addresses": "127.0.0.1",
        "unix_socket_directories": "",
        "fsync": "off",  # a test server: only its clients are killed, never the server
        "max_connections": "200",
        "shared_buffers": "64MB",
        **(settings or {}),
        "port": str(port),  # last: drawn again if taken (start_local_postgres)
    }
    args = [str(found / "postgres"), "-D", str(data)]
    for key, value in config.items():
        args += ["-c", f"{key}={value}"]
    return LocalPostgres(found, folder, port, password, _spawn(args, log), log, command=args)


def _spawn(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=_stop_with_parent, **_as_server_user(),
        )  # fmt: skip


def _wait_until_ready(server: LocalPostgres, *, stop_on_failure: bool = True) -> None:
    """Return once the server accepts its superuser (with its password: another server on
    the port refuses it); a StoreError (the server stopped) if it exits or times out."""
    import psycopg

    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if server.process.poll() is not None:
            text = server.log.read_text(errors="replace")[-2000:]
            if stop_on_failure:
                server.stop()
            raise StoreError(f"the PostgreSQL server did not start: {text}")
        try:
            psycopg.connect(server.url(), connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                server.stop()
                raise StoreError(
                    f"the PostgreSQL server did not accept connections in {START_TIMEOUT_S:g} s"
                ) from None
            time.sleep(0.05)  # polling the server's readiness: nothing to wait on instead
