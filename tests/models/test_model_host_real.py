"""The model host with the real embedded model: two processes share one loaded copy and
get the answers a process of their own gives; a host killed during a reply fails that
call as a model error, and the next call starts a new host. Short replies: CPU heavy,
run one at a time (the model pass)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.errors import ModelUnavailableError
from loopwright.messages import Message, ModelRequest
from loopwright.models import stop_hosts
from loopwright.models._host_files import read_json
from loopwright.models._local import LocalModel, resolve_local_path

pytestmark = [pytest.mark.model, pytest.mark.subprocess]
QUESTION = ModelRequest(
    messages=(Message.system("Answer with the number only."), Message.user("What is 6 * 7?")),
    temperature=0.0,
    max_output_tokens=6,
)
CLIENT = """
import asyncio, sys
from loopwright.messages import Message, ModelRequest
from loopwright.models._local import LocalModel, resolve_local_path
model = LocalModel(resolve_local_path(""), hosted=True)
request = ModelRequest(messages=(Message.system("Answer with the number only."),
                                 Message.user("What is 6 * 7?")),
                       temperature=0.0, max_output_tokens=6)
reply = asyncio.run(model.complete(request))
maps = open("/proc/self/maps").read()
print(repr(reply.text))
print("llama_cpp" in sys.modules, ".gguf" in maps)
"""


@pytest.fixture
def host_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = Path(f"/tmp/lwhr-{os.getpid()}-{tmp_path.name[-12:]}")
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST_DIR", str(folder))
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST", "on")
    monkeypatch.setenv("LOOPWRIGHT_PROMPT_CACHE", "0")  # every call evaluates its prompt
    yield folder
    stop_hosts(folder, wait_s=10.0)
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()


def host_info(folder: Path) -> dict[str, object]:
    [info] = [read_json(p) for p in folder.glob("host-*.json")]
    return info


def test_two_processes_share_one_loaded_copy_and_answer_as_one_alone(host_folder: Path) -> None:
    alone = asyncio.run(LocalModel(resolve_local_path(""), hosted=False).complete(QUESTION))
    clients = [
        subprocess.Popen(
            [sys.executable, "-c", CLIENT],
            env=os.environ.copy(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [client.communicate(timeout=900) for client in clients]
    for client, (out, err) in zip(clients, outputs, strict=True):
        assert client.returncode == 0, err
        # the same greedy answer as in a process of its own; no llama.cpp, no weights here
        assert out.splitlines() == [repr(alone.text), "False False"], (out, err)
    pid = int(str(host_info(host_folder)["pid"]))
    maps = Path(f"/proc/{pid}/maps").read_text()
    assert str(resolve_local_path("").resolve()) in maps  # the one copy: in the host


def test_a_host_killed_during_a_reply_fails_the_call_and_the_next_call_starts_a_new_one(
    host_folder: Path,
) -> None:
    model = LocalModel(resolve_local_path(""), hosted=True)
    counting = ModelRequest(
        messages=(Message.user("Count from 1 to 60, separated by commas."),),
        temperature=0.0,
        max_output_tokens=200,
    )
    pieces: list[str] = []

    def kill_the_host(piece: str) -> None:
        pieces.append(piece)
        if len(pieces) == 1:
            os.kill(int(str(host_info(host_folder)["pid"])), signal.SIGKILL)

    with pytest.raises(ModelUnavailableError) as failed:
        asyncio.run(model.complete_streaming(counting, kill_the_host))
    assert "stopped during the call; the next call starts a new one" in str(failed.value)
    killed = host_info(host_folder)["pid"]
    answer = asyncio.run(model.complete(QUESTION))
    assert answer.text.strip() == "42"
    assert host_info(host_folder)["pid"] != killed
    stop_hosts(host_folder)
    assert model._host is not None and model._host._started is not None
    model._host._started.wait(timeout=60)  # the host this process started, reaped
