"""The model host as processes: started by the first call, reused by the next process,
stopped when idle, and its faults: a host killed with its files left behind, a host that
stops answering, a call that waits too long for its turn, `loopwright model-host`.

The host serves a ScriptedModel here (the test double standing in for the LLM): its
replies come in order whoever asks, so the second reply going to a second process shows
that both reached the same host. The real model's host: test_model_host_real.py."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.errors import ModelError, ModelUnavailableError
from loopwright.messages import ModelResponse
from loopwright.models import host_statuses, stop_hosts
from loopwright.models._host_client import HostClient
from loopwright.models._host_files import host_dir, open_lock, read_json, try_lock, write_json
from loopwright.models._llama_engine import CallControl, CallRequest

pytestmark = pytest.mark.subprocess
REPLIES = ["first reply", "second reply", "third reply", "fourth reply"]
QUESTION = CallRequest(messages=({"role": "user", "content": "hi"},))
CLI = str(Path(sys.executable).parent / "loopwright")


@pytest.fixture
def host_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A host folder of the test's own; every host started in it is stopped after."""
    folder = Path(f"/tmp/lwh-{os.getpid()}-{tmp_path.name[-12:]}")  # short: a socket path
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST_DIR", str(folder))
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST", "on")
    yield host_dir()
    stop_hosts(folder, wait_s=5.0)
    for client in CLIENTS:
        reap(client)
    CLIENTS.clear()
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()


CLIENTS: list[HostClient] = []


def new_client(script: str) -> HostClient:
    """A client in this process (the hosts it starts are reaped after the test)."""
    client = HostClient(script, 0)
    CLIENTS.append(client)
    return client


@pytest.fixture
def script(tmp_path: Path) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(REPLIES))
    return f"scripted:{path}"


def host_pid(client: HostClient) -> int:
    return int(read_json(client.files.info)["pid"])


def wait_until_gone(pid: int, seconds: float = 30.0) -> None:
    """Until process `pid` has ended (a polled condition with a deadline)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return  # ended, not yet reaped by its parent
        time.sleep(0.05)
    raise AssertionError(f"process {pid} is still running")


def reap(client: HostClient) -> None:
    if client._started is not None:
        client._started.wait(timeout=30)


def test_the_first_call_starts_the_host_and_another_process_uses_the_same_one(
    host_folder: Path, script: str
) -> None:
    client = new_client(script)
    assert not client.files.socket.exists()
    phases: list[str] = []
    first = client.complete(QUESTION, CallControl(on_phase=lambda p, d: phases.append(p)))
    assert first.text == "first reply"
    assert phases[0] == "loading"  # starting the host is part of loading the model
    assert first.timings is not None and first.timings.load_ms > 0
    pid = host_pid(client)
    assert stat.S_IMODE(client.files.socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(host_folder.stat().st_mode) == 0o700

    other = subprocess.run(
        [sys.executable, "-c",
         "from loopwright.models._host_client import HostClient\n"
         "from loopwright.models._llama_engine import CallControl, CallRequest\n"
         f"c = HostClient({script!r}, 0)\n"
         "r = c.complete(CallRequest(messages=({'role': 'user', 'content': 'hi'},)), CallControl())\n"
         "print(r.text)\n"
         "print(c._started is None)"],
        env=os.environ.copy(), capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert other.stdout.splitlines() == ["second reply", "True"]  # the same host; none started
    assert host_pid(client) == pid
    status = host_statuses(host_folder)
    [host] = status["hosts"]
    assert (host["pid"], host["state"], host["served"]) == (pid, "idle", 2)


def test_an_idle_host_stops_and_the_next_call_starts_a_new_one(
    host_folder: Path, script: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST_IDLE", "0.5")
    client = new_client(script)
    assert client.complete(QUESTION, CallControl()).text == "first reply"
    pid = host_pid(client)
    reap(client)  # it stops by itself, half a second after its call
    assert not client.files.socket.exists() and not client.files.info.exists()
    assert "stopped" in client.files.log.read_text().splitlines()[-1]
    again = client.complete(QUESTION, CallControl())
    assert again.text == "first reply"  # a new host: the script from its start
    assert host_pid(client) != pid
    reap(client)


def test_files_left_by_a_killed_host_are_cleared_and_a_new_host_starts(
    host_folder: Path, script: str
) -> None:
    client = new_client(script)
    client.complete(QUESTION, CallControl())
    pid = host_pid(client)
    os.kill(pid, signal.SIGKILL)
    reap(client)
    assert client.files.socket.exists() and client.files.info.exists()  # left behind
    assert client.complete(QUESTION, CallControl()).text == "first reply"
    assert host_pid(client) != pid
    os.kill(host_pid(client), signal.SIGKILL)  # and again, now seen by `status`
    reap(client)
    [stale] = host_statuses(host_folder)["hosts"]
    assert stale["state"] == "stale files removed"
    assert not client.files.socket.exists() and not client.files.info.exists()


def test_a_host_that_stops_answering_fails_the_call_with_what_to_do(
    host_folder: Path, script: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped (SIGSTOP) while a call waits in it, and before the next call: each call
    fails after LOOPWRIGHT_MODEL_HOST_TIMEOUT, saying what to do; `stop` ends the host."""
    client = new_client(script)
    client.complete(QUESTION, CallControl())
    pid = host_pid(client)
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST_TIMEOUT", "1")
    holder = open_lock(host_folder / "turn.lock")  # the call will wait in the host
    assert try_lock(holder)

    def stop_the_host(phase: str, _detail: str) -> None:
        if phase == "waiting":
            os.kill(pid, signal.SIGSTOP)

    for control in (CallControl(on_phase=stop_the_host), CallControl()):
        began = time.monotonic()
        with pytest.raises(ModelUnavailableError) as failed:
            client.complete(QUESTION, control)
        assert time.monotonic() - began < 20  # bounded by the timeout, not forever
        message = str(failed.value)
        assert f"the model host (pid {pid}) has not answered for 1 s" in message
        assert "`loopwright model-host stop` stops the model host" in message
    holder.close()
    [done] = stop_hosts(host_folder, wait_s=1.0)
    assert (done["pid"], done["how"]) == (pid, "terminated")


def test_a_call_waits_for_its_turn_at_most_the_time_set(
    host_folder: Path, script: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process computes (it holds the user's turn): the call waits, says for whom,
    and gives up after LOOPWRIGHT_MODEL_WAIT with a model error that says so."""
    holder = open_lock(host_folder / "turn.lock")
    assert try_lock(holder)
    write_json(host_folder / "turn.json",
               {"pid": os.getpid(), "command": "loopwright eval evals/", "since": time.time()})  # fmt: skip
    monkeypatch.setenv("LOOPWRIGHT_MODEL_WAIT", "1")
    client = new_client(script)
    told: list[tuple[str, str]] = []
    with pytest.raises(ModelError) as failed:
        client.complete(QUESTION, CallControl(on_phase=lambda p, d: told.append((p, d))))
    assert ("waiting", f"pid {os.getpid()} (loopwright eval evals/) for 0 s") in [
        (p, d.rsplit(" for ", 1)[0] + " for 0 s") for p, d in told
    ]
    assert "LOOPWRIGHT_MODEL_WAIT" in str(failed.value)
    assert "loopwright eval evals/" in str(failed.value)
    holder.close()
    assert client.complete(QUESTION, CallControl()).text == "first reply"  # never computed


def test_model_host_status_and_stop_commands(host_folder: Path, script: str) -> None:
    def command(*argv: str) -> str:
        done = subprocess.run([CLI, "model-host", *argv], env=os.environ.copy(),
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "no model host is running" in command("status")
    client = new_client(script)
    client.complete(QUESTION, CallControl())
    pid = host_pid(client)
    shown = command("status")
    assert f"model host pid {pid} · idle · script.json" in shown
    assert "1 calls served" in shown and "stops after 300 s idle" in shown
    assert json.loads(command("status", "--json"))["hosts"][0]["pid"] == pid
    assert command("stop") == f"model host pid {pid} ({script}): stopped\n"
    reap(client)
    assert "no model host is running" in command("status")


def test_a_call_queued_behind_another_is_told_whose_runs_and_its_wait_is_timed(
    host_folder: Path, script: str
) -> None:
    client = new_client(script)
    client.complete(QUESTION, CallControl())  # the host is up
    holder = open_lock(host_folder / "turn.lock")  # the first call waits for its turn
    assert try_lock(holder)
    told: dict[str, list[tuple[str, str]]] = {"first": [], "second": []}
    replies: dict[str, object] = {}

    def ask(name: str) -> None:
        control = CallControl(on_phase=lambda p, d: told[name].append((p, d)))
        replies[name] = client.complete(QUESTION, control)

    first = threading.Thread(target=ask, args=("first",))
    first.start()
    deadline = time.monotonic() + 30
    while not told["first"] and time.monotonic() < deadline:  # it reached the model
        time.sleep(0.01)
    second = threading.Thread(target=ask, args=("second",))
    second.start()
    while not told["second"] and time.monotonic() < deadline:  # it is queued
        time.sleep(0.01)
    time.sleep(0.5)  # the queued call's wait, to be measured
    holder.close()
    first.join(timeout=30)
    second.join(timeout=30)
    phase, detail = told["second"][0]
    assert phase == "waiting" and detail.startswith(f"pid {os.getpid()} (")
    reply = replies["second"]
    assert isinstance(reply, ModelResponse) and reply.timings is not None
    assert reply.timings.wait_ms >= 500


def test_the_example_shows_the_hosts_and_stops_them(host_folder: Path, script: str) -> None:
    example = Path(__file__).parents[2] / "examples" / "model_host.py"

    def run(*argv: str) -> str:
        done = subprocess.run([sys.executable, str(example), *argv], env=os.environ.copy(),
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    client = new_client(script)
    client.complete(QUESTION, CallControl())
    pid = host_pid(client)
    assert run("--status") == f"model host pid {pid}: idle, {script}, 1 calls served\n"
    assert run("--stop") == f"model host pid {pid}: stopped\n"
    assert run("--status").startswith("no model host is running (folder ")
