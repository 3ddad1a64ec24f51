"""Where the model host lives: its private folder, socket, lock and state files.

One folder per user: `LOOPWRIGHT_MODEL_HOST_DIR`, else `$XDG_RUNTIME_DIR/loopwright`, else
`/tmp/loopwright-UID`. It must be a real folder (not a link) owned by the user, and is
made 0700: only the user reaches the socket in it (the host also checks each peer's uid).

    host-KEY.sock   the host's Unix socket (0600)
    host-KEY.lock   held (flock) by the living host: free means no host, whatever is left
    host-KEY.json   the host's pid, model, start time, idle limit (for `model-host status`)
    host-KEY.log    the host's stderr
    turn.lock       held while a model computes, by any process of the user's: runs take
    turn.json       turns instead of sharing the cores; who holds it, since when

KEY names the model file, its context, the loopwright install and the settings that change
what the host computes: two installs (or two prompt-cache folders) never share a host.

flock locks are the kernel's: a killed process's lock is released with it, so a lock file
is never stale; a socket or JSON file left by a killed host is, and is replaced.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import stat
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from loopwright.errors import ConfigurationError

HOST_DIR_ENV = "LOOPWRIGHT_MODEL_HOST_DIR"
PROTOCOL = 1
"""The host's wire protocol: part of the key, so a client never talks to another one."""
KEY_SETTINGS = ("LOOPWRIGHT_PROMPT_CACHE", "LOOPWRIGHT_MODEL_CACHE", "LOOPWRIGHT_LLAMA_REPACK")
"""Settings a host is started with that change what it computes or where it keeps state."""
SOCKET_PATH_MAX = 100
"""Unix socket paths are limited to 107 bytes on Linux (103 on macOS)."""


def host_dir() -> Path:
    """The user's model-host folder, made (0700) if missing; refused when it is not the
    user's own private folder."""
    configured = os.environ.get(HOST_DIR_ENV, "").strip()
    if configured:
        folder = Path(configured).expanduser()
    elif os.environ.get("XDG_RUNTIME_DIR"):
        folder = Path(os.environ["XDG_RUNTIME_DIR"]) / "loopwright"
    else:
        folder = Path(tempfile.gettempdir()) / f"loopwright-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700, parents=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise ConfigurationError(
            f"the model host folder {folder} is not a folder of yours: remove it, set "
            f"{HOST_DIR_ENV} to a private folder, or LOOPWRIGHT_MODEL_HOST=off"
        )
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)
    return folder


def host_key(model: Path, context: int) -> str:
    """The host for this model file and context, this install and these settings."""
    try:
        info = model.stat()
        identity = f"{model.resolve()}\0{info.st_size}\0{info.st_mtime_ns}"
    except OSError:
        identity = str(model)
    settings = "\0".join(f"{n}={os.environ.get(n, '')}" for n in KEY_SETTINGS)
    install = f"{os.path.realpath(sys.executable)}\0{Path(__file__).resolve().parents[1]}"
    digest = hashlib.sha256(f"{PROTOCOL}\0{identity}\0{context}\0{install}\0{settings}".encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class HostFiles:
    """The files of one host (one key) in the host folder."""

    folder: Path
    key: str

    @property
    def socket(self) -> Path:
        return self.folder / f"host-{self.key}.sock"

    @property
    def lock(self) -> Path:
        return self.folder / f"host-{self.key}.lock"

    @property
    def info(self) -> Path:
        return self.folder / f"host-{self.key}.json"

    @property
    def log(self) -> Path:
        return self.folder / f"host-{self.key}.log"

    def check_socket_path(self) -> None:
        if len(str(self.socket).encode()) > SOCKET_PATH_MAX:
            raise ConfigurationError(
                f"the model host's socket path {self.socket} is too long for a Unix socket: "
                f"set {HOST_DIR_ENV} to a shorter folder"
            )


def all_hosts(folder: Path) -> list[HostFiles]:
    """Every host whose files are in `folder` (living or left behind)."""
    keys = {p.name[5:-5] for p in folder.glob("host-*.lock")}
    keys |= {p.name[5:-5] for p in folder.glob("host-*.json")}
    keys |= {p.name[5:-5] for p in folder.glob("host-*.sock")}
    return [HostFiles(folder, key) for key in sorted(keys)]


def open_lock(path: Path) -> IO[bytes]:
    """The lock file, opened for flock (0600)."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    return os.fdopen(descriptor, "r+b")


def try_lock(handle: IO[bytes]) -> bool:
    """Take the flock if it is free; False when another process holds it."""
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def is_held(path: Path) -> bool:
    """Whether some living process holds the flock on `path` (a host: it is alive)."""
    if not path.exists():
        return False
    try:
        handle = open_lock(path)
    except OSError:
        return False
    with handle:
        if try_lock(handle):
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            return False
        return True


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace `path` with `data` at once (0600)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".part")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remove(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def this_command() -> str:
    """This process's command line, shortened, for who-is-using-it messages."""
    words = [Path(sys.argv[0]).name if sys.argv else "python", *sys.argv[1:]]
    text = " ".join(words)
    return text if len(text) <= 80 else text[:77] + "..."


def holder_text(info: dict[str, Any], now: float | None = None) -> str:
    """`pid 1234 (loopwright eval evals/) for 12 s`, from a turn.json or a host's status."""
    if not info.get("pid"):
        return "another process"
    since = info.get("since")
    took = f" for {(now or time.time()) - float(since):.0f} s" if since else ""
    what = f" ({info['command']})" if info.get("command") else ""
    return f"pid {info['pid']}{what}{took}"
