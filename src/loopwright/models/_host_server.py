"""The model host: one loaded copy of the embedded model, serving the user's processes.

    python -m loopwright.models._host_server --model PATH --context N --key KEY --idle S

Started on demand by the first loopwright process that needs the model (models/
_host_client.py), in a session of its own. It holds `host-KEY.lock` while it lives (a
second host for the same key exits at once), listens on `host-KEY.sock` (0600, in the
user's private host folder; a peer of another user is refused), loads the model, and
runs the calls one at a time in the order of models/_host_queue.py, each under the user's
turn lock. It stops when no call came for `--idle` seconds, or when asked
(`loopwright model-host stop`), removing its socket and state file.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from loopwright.errors import ConfigurationError, LoopwrightError, ModelError
from loopwright.messages import ModelResponse, ModelTimings
from loopwright.models._host_files import (
    HostFiles,
    holder_text,
    open_lock,
    remove,
    try_lock,
    write_json,
)
from loopwright.models._host_queue import FairQueue, Pending
from loopwright.models._host_wire import HEARTBEAT_S, Channel, WireClosed, peer_uid
from loopwright.models._llama_engine import CallControl, CallRequest
from loopwright.models._turn import Abandoned


class Engine(Protocol):
    """What the host runs calls on: the llama.cpp engine, or a scripted stand-in."""

    @property
    def loaded(self) -> bool: ...

    def load(self) -> float: ...

    def complete(self, request: CallRequest, control: CallControl) -> ModelResponse: ...


class Host:
    def __init__(self, files: HostFiles, engine: Engine, model: str, idle_s: float) -> None:
        self.files = files
        self.engine = engine
        self.model = model
        self.idle_s = idle_s
        self.queue = FairQueue()
        self.started = time.time()
        self.last_call = time.monotonic()
        self.load_error: str | None = None
        self.served = 0
        self.listener: socket.socket | None = None
        self.stopped = threading.Event()

    # --- life --------------------------------------------------------------------------

    def serve(self) -> None:
        self.listener = _listen(self.files.socket)
        write_json(self.files.info, self._info())
        for target in (self._load, self._work, self._heartbeat):
            threading.Thread(target=target, daemon=True).start()
        self.listener.settimeout(0.5)
        while not self.stopped.is_set():
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            threading.Thread(target=self._connection, args=(sock,), daemon=True).start()
        self._close()

    def stop(self, idle: bool = False) -> None:
        """Stop serving; the calls still queued are told (after an idle stop, to try again:
        they came as it stopped, and a new host takes them)."""
        self.stopped.set()
        kind = "retry" if idle else "model"
        for call in self.queue.stop():
            call.send({"op": "error", "kind": kind, "message": "the model host was stopped"})

    def _close(self) -> None:
        remove(self.files.socket, self.files.info)
        if self.listener is not None:
            self.listener.close()

    def _info(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "model": self.model,
            "key": self.files.key,
            "started": self.started,
            "idle_s": self.idle_s,
        }

    def _load(self) -> None:
        try:
            self.engine.load()
        except (LoopwrightError, OSError, ValueError) as exc:
            self.load_error = str(exc)

    def _heartbeat(self) -> None:
        while not self.stopped.wait(HEARTBEAT_S):
            for call in self.queue.snapshot():
                call.send({"op": "alive", "phase": call.phase, "detail": call.detail})

    # --- calls -------------------------------------------------------------------------

    def _work(self) -> None:
        while not self.stopped.is_set():
            call = self.queue.take(timeout=0.5)
            if call is None:
                idle = time.monotonic() - self.last_call
                if not self.queue.busy() and idle >= self.idle_s:
                    self.stop(idle=True)
                continue
            began = time.monotonic()
            try:
                self._run(call)
            finally:
                self.queue.done(call, time.monotonic() - began)
                self.last_call = time.monotonic()
                self.served += 1

    def _run(self, call: Pending) -> None:
        def on_phase(phase: str, detail: str) -> None:
            call.phase, call.detail = phase, detail
            call.send({"op": "phase", "phase": phase, "detail": detail})

        def on_text(piece: str) -> None:
            call.send({"op": "text", "piece": piece})

        try:
            if self.load_error is not None:
                raise ConfigurationError(self.load_error)
            request = CallRequest.from_dict(call.request)
            control = CallControl(
                on_phase,
                on_text if request.streamed else None,
                call.is_gone,
                call.client,
                f"the model host, for pid {call.client}: {call.command}",
            )
            response = self.engine.complete(request, control)
        except Abandoned:
            return
        except ConfigurationError as exc:
            call.send({"op": "error", "kind": "config", "message": str(exc)})
            return
        except (ModelError, LoopwrightError, ValueError, KeyError, TypeError) as exc:
            call.send({"op": "error", "kind": "model", "message": str(exc)})
            return
        call.send({"op": "done", "response": _with_queue_wait(response, call).to_dict()})

    def _connection(self, sock: socket.socket) -> None:
        channel = Channel(sock)
        try:
            if peer_uid(sock) not in (None, os.getuid()):
                return  # another user: nothing is said to them
            sock.settimeout(30.0)
            hello = channel.receive()
            channel.send({"op": "hello", "pid": os.getpid(), "model": self.model,
                          "loaded": self.engine.loaded})  # fmt: skip
            message = channel.receive()
            sock.settimeout(None)
            self._answer(channel, hello, message)
        except (WireClosed, TimeoutError, OSError):
            pass
        finally:
            channel.close()

    def _answer(self, channel: Channel, hello: dict[str, Any], message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "status":
            channel.send({"op": "status", **self.status()})
        elif op == "stop":
            channel.send({"op": "stopping"})
            self.stop()
        elif op == "call":
            if self.stopped.is_set():  # the call was never taken: the client starts a host
                channel.send({"op": "error", "kind": "retry", "message": "the host stopped"})
                return
            gone = threading.Event()
            call = Pending(str(hello.get("pid", "")), str(hello.get("command", "")),
                           dict(message.get("request") or {}), channel.send,
                           lambda: gone.is_set() or channel.closed)  # fmt: skip
            self.last_call = time.monotonic()
            if not self.queue.submit(call):
                channel.send({"op": "error", "kind": "retry", "message": "the host stopped"})
                return
            channel.send({"op": "accepted"})
            self._say_who_runs(call)
            _wait_for_close(channel, gone)

    def _say_who_runs(self, call: Pending) -> None:
        """A call queued behind another client's is told whose call runs."""
        running = self.queue.running
        if running is None or running is call:
            return
        call.phase = "waiting"
        call.detail = holder_text(
            {"pid": running.client, "command": running.command, "since": running.started}
        )
        call.send({"op": "phase", "phase": "waiting", "detail": call.detail})

    def status(self) -> dict[str, Any]:
        calls = [
            {
                "pid": c.client,
                "command": c.command,
                "phase": c.phase,
                "detail": c.detail,
                "since": c.since,
                "started": c.started,
            }
            for c in self.queue.snapshot()
        ]
        return {
            **self._info(),
            "loaded": self.engine.loaded,
            "load_error": self.load_error,
            "calls": calls,
            "served": self.served,
            "idle_for": time.monotonic() - self.last_call if not calls else 0.0,
            "rss_mb": _rss_mb(),
        }


def _with_queue_wait(response: ModelResponse, call: Pending) -> ModelResponse:
    """The time the call waited in the queue (another client's call ran) is waiting for
    the model too."""
    queued_ms = max(0.0, call.started - call.since) * 1000
    timings = response.timings or ModelTimings()
    timings = dataclasses.replace(timings, wait_ms=timings.wait_ms + queued_ms)
    return dataclasses.replace(response, timings=timings)


def _wait_for_close(channel: Channel, gone: threading.Event) -> None:
    """Read until the client closes the connection (its call is then abandoned)."""
    with contextlib.suppress(WireClosed, OSError):
        while True:
            channel.receive()
    gone.set()


def _listen(path: Path) -> socket.socket:
    """Bind the socket (the host holds the lock: a socket file there is stale) as 0600."""
    remove(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    listener.listen(64)
    return listener


def _rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def engine_for_spec(model: str, context: int) -> Engine:
    """`scripted:FILE.json`: a ScriptedModel stand-in (tests of programs that use the
    host); anything else: a GGUF file."""
    if model.startswith("scripted:"):
        from loopwright.models._host_scripted import ScriptedEngine

        return ScriptedEngine(model.removeprefix("scripted:"))
    from loopwright.models._llama_engine import LlamaEngine

    return LlamaEngine(Path(model), context)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="loopwright-model-host")
    parser.add_argument("--model", required=True)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--key", required=True)
    parser.add_argument("--folder", required=True)
    parser.add_argument("--idle", type=float, default=300.0)
    args = parser.parse_args(argv)
    files = HostFiles(Path(args.folder), args.key)
    lock = open_lock(files.lock)
    if not try_lock(lock):
        return 0  # another host for this key is alive
    host = Host(files, engine_for_spec(args.model, args.context), args.model, args.idle)
    signal.signal(signal.SIGTERM, lambda *_: host.stop())
    print(f"{time.strftime('%F %T')} model host {os.getpid()} for {args.model}", file=sys.stderr)
    try:
        host.serve()
    finally:
        print(f"{time.strftime('%F %T')} model host {os.getpid()} stopped", file=sys.stderr)
        sys.stderr.flush()
    os._exit(0)  # skip llama.cpp's teardown: the process ends here either way


if __name__ == "__main__":
    sys.exit(main())
