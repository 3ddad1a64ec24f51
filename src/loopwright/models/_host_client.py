"""Calls to the model host, which is started when none is running.

A call connects to the host's socket; when nothing answers there and no host holds the
lock, it starts one (models/_host_server.py, in a session of its own, its stderr in
`host-KEY.log`) and waits for it to listen. The host queues the call, says each phase as
it starts, the reply's pieces as they come, and that it is alive every second.

What can go wrong, and what the caller sees:
- the host stopped (idle, or asked to) just as the call came: the call goes to a new host;
- the host died during the call (killed, crashed): `ModelUnavailableError`, a model error
  the run can retry; the next call starts a new host;
- the host says nothing for LOOPWRIGHT_MODEL_HOST_TIMEOUT seconds (default 60: it is
  stopped, or stuck), or the call waited LOOPWRIGHT_MODEL_WAIT seconds for its turn
  (default 600): a model error that says which process holds the model and how to stop it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loopwright.errors import ConfigurationError, ModelError, ModelUnavailableError
from loopwright.messages import ModelResponse, ModelTimings
from loopwright.models._host_files import (
    HostFiles,
    host_dir,
    host_key,
    is_held,
    read_json,
    this_command,
)
from loopwright.models._host_wire import Channel, WireClosed, peer_uid
from loopwright.models._llama_engine import CallControl, CallRequest
from loopwright.models._threads import WAIT_POLICY
from loopwright.models._turn import STOP_HINT, WAIT_ENV, Abandoned, longest_wait

HOST_ENV = "LOOPWRIGHT_MODEL_HOST"
IDLE_ENV = "LOOPWRIGHT_MODEL_HOST_IDLE"
TIMEOUT_ENV = "LOOPWRIGHT_MODEL_HOST_TIMEOUT"
DEFAULT_IDLE_S = 300.0
DEFAULT_TIMEOUT_S = 60.0
START_S = 120.0
"""The longest a new host may take to listen (a Python start on a very busy machine)."""
POLL_S = 0.5
PASSED_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR", "VIRTUAL_ENV",
              "LD_LIBRARY_PATH")  # fmt: skip
PASSED_PREFIXES = ("LC_", "XDG_", "PYTHON", "LOOPWRIGHT_", "OMP_", "GOMP_")
"""The host gets these of the starting process's environment, nothing else (no keys)."""


def host_wanted() -> bool:
    """LOOPWRIGHT_MODEL_HOST: `off` (or 0, no, false) runs the embedded model in each
    process; anything else, or unset, uses the model host where Unix sockets exist."""
    setting = os.environ.get(HOST_ENV, "").strip().lower()
    if setting in {"0", "off", "no", "false"}:
        return False
    return hasattr(socket, "AF_UNIX") and sys.platform != "win32"


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ConfigurationError(f"{name}: a number of seconds above 0, not {text!r}")
    return value


class HostClient:
    """The model host for one model (a GGUF path, or `scripted:FILE` for tests) and context."""

    def __init__(self, model: str, context: int) -> None:
        self.model = model
        self.context = context
        folder = host_dir()
        self.files = HostFiles(folder, host_key(Path(model), context))
        self.files.check_socket_path()
        self._started: subprocess.Popen[bytes] | None = None

    def start_soon(self) -> None:
        """Start the host now if none is running (the call that needs it comes later)."""
        if not is_held(self.files.lock) and not self._starting():
            self._start()

    def complete(self, request: CallRequest, control: CallControl) -> ModelResponse:
        began = time.monotonic()
        for _attempt in range(3):
            channel, started = self._connect(control)
            try:
                response = self._call(channel, request, control)
            except _Retry:
                continue
            finally:
                channel.close()
            if started:  # starting the host was part of loading the model
                timings = response.timings or ModelTimings()
                spent = timings.wait_ms + timings.prompt_ms + timings.generate_ms
                rest = (time.monotonic() - began) * 1000 - spent
                timings = dataclasses.replace(timings, load_ms=max(timings.load_ms, rest))
                response = dataclasses.replace(response, timings=timings)
            return response
        raise ModelUnavailableError(self._stopped_text("kept stopping"), provider="local")

    # --- one call ------------------------------------------------------------------------

    def _call(self, channel: Channel, request: CallRequest, control: CallControl) -> ModelResponse:
        if not channel.send({"op": "call", "request": request.to_dict()}):
            raise _Retry
        watch = _Watch(_seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT_S), longest_wait())
        while True:
            message = self._next(channel, control, watch)
            op = message.get("op")
            if op == "done":
                return ModelResponse.from_dict(dict(message.get("response") or {}))
            if op == "error":
                _raise_error(message)
            if op == "text" and control.on_text is not None:
                control.on_text(str(message.get("piece", "")))
            watch.heard(message, control)

    def _next(self, channel: Channel, control: CallControl, watch: _Watch) -> dict[str, Any]:
        """The host's next message; an error when it died, went silent, or the call waited
        too long for its turn."""
        while True:
            if control.should_stop():
                raise Abandoned
            try:
                return channel.receive()
            except TimeoutError:
                now = time.monotonic()
                if now - watch.last > watch.timeout:
                    problem: ModelError = ModelUnavailableError(
                        self._silent_text(watch.timeout), provider="local"
                    )
                elif watch.waiting_since is not None and now - watch.waiting_since > watch.longest:
                    problem = ModelError(self._waited_text(watch), provider="local")
                else:
                    continue
            except WireClosed:
                if not watch.accepted:
                    raise _Retry from None
                problem = ModelUnavailableError(
                    self._stopped_text("stopped during the call"), provider="local"
                )
            raise problem

    # --- reaching the host -----------------------------------------------------------

    def _connect(self, control: CallControl) -> tuple[Channel, bool]:
        """A connection to the host, which has said hello; True when the call had to wait
        for a host to start (that time is part of loading the model)."""
        deadline = time.monotonic() + START_S
        waited = spawned = False
        while True:
            channel = self._try_connect()
            if channel is not None:
                return channel, waited
            if not waited:
                control.on_phase("loading", "starting the model host")
                waited = True
            if not is_held(self.files.lock) and not self._starting():
                if spawned and self._started is not None and self._started.returncode != 0:
                    raise ModelUnavailableError(self._failed_start_text(), provider="local")
                self._start()
                spawned = True
            if time.monotonic() > deadline:
                raise ModelUnavailableError(
                    f"the model host did not start listening in {START_S:.0f} s; its log: "
                    f"{self.files.log}",
                    provider="local",
                )
            if control.should_stop():
                raise Abandoned
            time.sleep(0.05)

    def _starting(self) -> bool:
        """A host this process started is still starting (it has not taken its lock yet)."""
        return self._started is not None and self._started.poll() is None

    def _try_connect(self) -> Channel | None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(self.files.socket))
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            return None
        if peer_uid(sock) not in (None, os.getuid()):
            sock.close()
            raise ModelUnavailableError(
                f"{self.files.socket} is served by another user's process: refused",
                provider="local",
            )
        sock.settimeout(POLL_S)
        channel = Channel(sock)
        hello = {"op": "hello", "protocol": 1, "pid": os.getpid(), "command": this_command()}
        timeout = _seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT_S)
        began = time.monotonic()
        try:
            channel.send(hello)
            while True:
                try:
                    channel.receive()
                    return channel
                except TimeoutError:
                    if time.monotonic() - began > timeout:
                        channel.close()
                        raise ModelUnavailableError(
                            self._silent_text(timeout), provider="local"
                        ) from None
        except WireClosed:  # it was stopping: try again (a new host if need be)
            channel.close()
            return None

    def _start(self) -> None:
        """Start a host in a session of its own (it outlives this process); a second one
        for the same key exits at once, so a race between two clients is harmless."""
        if self._started is not None:
            self._started.poll()  # reap an earlier one
        log = os.open(self.files.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            self._started = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "loopwright.models._host_server",
                    "--model",
                    self.model,
                    "--context",
                    str(self.context),
                    "--key",
                    self.files.key,
                    "--folder",
                    str(self.files.folder),
                    "--idle",
                    str(_seconds(IDLE_ENV, DEFAULT_IDLE_S)),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                cwd=self.files.folder,
                env=_host_environment(),
                start_new_session=True,
                close_fds=True,
            )
        finally:
            os.close(log)

    # --- what is said ----------------------------------------------------------------

    def _host_text(self) -> str:
        info = read_json(self.files.info)
        return f"the model host (pid {info['pid']})" if info.get("pid") else "the model host"

    def _stopped_text(self, what: str) -> str:
        return (
            f"{self._host_text()} {what}; the next call starts a new one (its log: "
            f"{self.files.log})"
        )

    def _silent_text(self, timeout: float) -> str:
        return (
            f"{self._host_text()} has not answered for {timeout:.0f} s ({TIMEOUT_ENV}): it is "
            f"stopped or stuck; {STOP_HINT}"
        )

    def _waited_text(self, watch: _Watch) -> str:
        holder = f": {watch.detail} is using it" if watch.detail else ""
        return (
            f"waited {watch.longest:.0f} s ({WAIT_ENV}) for the embedded model{holder}; {STOP_HINT}"
        )

    def _failed_start_text(self) -> str:
        tail = ""
        with contextlib.suppress(OSError):
            lines = self.files.log.read_text(errors="replace").strip().splitlines()
            tail = f": {lines[-1]}" if lines else ""
        return f"the model host exited as it started{tail} (its log: {self.files.log})"


class _Retry(Exception):
    """The host stopped before it took the call: the call goes to a (new) host."""


class _Watch:
    """What a call has heard from the host: when last, whether its call was taken, since
    when it waits for its turn (until its prompt is evaluated), and for whom."""

    def __init__(self, timeout: float, longest: float) -> None:
        self.timeout = timeout
        self.longest = longest
        self.last = time.monotonic()
        self.waiting_since: float | None = self.last
        self.accepted = False
        self.detail = ""

    def heard(self, message: dict[str, Any], control: CallControl) -> None:
        self.last = time.monotonic()
        op = message.get("op")
        if op == "accepted":
            self.accepted = True
        if op not in ("phase", "alive"):
            return
        phase, self.detail = str(message.get("phase")), str(message.get("detail") or "")
        if phase in ("prompt", "generating"):
            self.waiting_since = None
        if op == "phase":
            control.on_phase(phase, self.detail)  # type: ignore[arg-type]


def _raise_error(message: dict[str, Any]) -> None:
    kind, text = message.get("kind"), str(message.get("message", ""))
    if kind == "retry":
        raise _Retry
    if kind == "config":
        raise ConfigurationError(text)
    raise ModelError(text, provider="local")


def _host_environment() -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if name in PASSED_ENV or name.startswith(PASSED_PREFIXES)
    }
    if "OMP_WAIT_POLICY" not in env and "GOMP_SPINCOUNT" not in env:
        env.update(WAIT_POLICY)  # a short spin at llama.cpp's barriers
    return env
