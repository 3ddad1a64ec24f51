"""`loopwright serve` as a real process, and examples/http_client.py against a live server."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import TOKENS, echo_script, live_server, make_config

from loopwright.store import open_store

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
LOOPWRIGHT = [sys.executable, "-m", "loopwright"]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LOOPWRIGHT, *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_serve_refuses_a_public_address_without_tokens() -> None:
    result = run_cli("serve", "--host", "0.0.0.0", "--store", ":memory:")
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0 without tokens" in result.stderr
    assert "--token-file" in result.stderr


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "token file not found"),
        ("tokens = 3", "non-empty [tokens] table"),
        ("[tokens]\nshort = 'acme'", "shorter than 8 characters"),
        ("[tokens\n", "not valid TOML"),
    ],
)
def test_serve_rejects_a_bad_token_file(tmp_path: Path, content: str | None, says: str) -> None:
    file = tmp_path / "tokens.toml"
    if content is not None:
        file.write_text(content)
    result = run_cli("serve", "--token-file", str(file), "--store", ":memory:")
    assert result.returncode == 2
    assert says in result.stderr


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`loopwright serve --port 0` with a token file and a SQLite store file;
    yields (url, store file)."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text("[tokens]\n" + "".join(f'"{t}" = "{n}"\n' for t, n in TOKENS.items()))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    process = subprocess.Popen(
        [*LOOPWRIGHT, "serve", "--port", "0", "--store", str(tmp_path / "runs.db"),
         "--token-file", str(tokens), "--workspace", str(workspace),
         "--allow-model", f"scripted:{tmp_path}/*"],
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert process.stderr is not None
    try:
        line = process.stderr.readline()  # printed once the socket listens
        assert "serving the dashboard and the API on http://127.0.0.1:" in line, line
        assert "2 token(s)" in line
        url = line.split(" on ")[1].split()[0]
        yield url, tmp_path / "runs.db"
    finally:
        process.terminate()
        process.wait(timeout=20)
        process.stderr.close()


def test_serve_runs_the_api_with_tokens(served: tuple[str, Path], tmp_path: Path) -> None:
    url, store_file = served
    assert httpx.get(f"{url}/api/runs").status_code == 401
    spec = echo_script(tmp_path / "s.json", 1, answer="served")
    headers = {"Authorization": "Bearer acme-token-1234"}
    created = httpx.post(
        f"{url}/api/runs", json={"prompt": "p", "model": spec, "tools": ["echo"]}, headers=headers
    )
    assert created.status_code == 201
    assert created.json()["tenant"] == "acme"
    assert httpx.get(url + "/").status_code == 200
    run_id = created.json()["run_id"]
    with httpx.stream(
        "GET", f"{url}/api/runs/{run_id}/events",
        headers={**headers, "Accept": "text/event-stream"}, timeout=20,
    ) as stream:  # fmt: skip
        names = [line for line in stream.iter_lines() if line.startswith("event:")]
    assert names == ["event: end"]
    stored = open_store(store_file).get_run(run_id)  # the server's runs are in its store file
    assert stored is not None and stored.status == "completed" and stored.answer == "served"


def test_the_http_client_example(tmp_path: Path) -> None:
    spec = echo_script(tmp_path / "s.json", 2, answer="two echoes")
    with live_server(make_config(tmp_path, tokens=TOKENS)) as server:
        result = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "http_client.py"), "Echo twice",
             "--url", server.url, "--token", "globex-token-5678", "--model", spec, "--tools", "echo"],
            capture_output=True, text=True, timeout=60, check=False,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[0].startswith("run run_")
        assert sum("✓ " in line and "echo(" in line for line in lines) == 2
        assert lines[-1] == "completed: two echoes"
        run_id = lines[0].split()[1]
        run = httpx.get(
            f"{server.url}/api/runs/{run_id}", headers={"Authorization": "Bearer globex-token-5678"}
        )
        assert run.json()["tenant"] == "globex"
        assert run.json()["answer"] == "two echoes"


def test_a_run_whose_store_fails_is_reported_in_one_line(tmp_path: Path) -> None:
    """The store fails mid-run (the server may write no more than 300 kB to a file: its
    writes past that fail, as on a full disk): the run's error, which nobody awaits, is one
    line of the server's log, not "Task exception was never retrieved" and a traceback."""
    big = "z" * 400_000
    replies = [
        {"thought": "t", "action": "echo", "action_input": {"text": big}},
        {"thought": "t", "final_answer": "ok"},
    ]
    (tmp_path / "s.json").write_text(json.dumps([json.dumps(r) for r in replies]))

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))

    process = subprocess.Popen(
        [*LOOPWRIGHT, "serve", "--port", "0", "--store", str(tmp_path / "runs.db"),
         "--model", f"scripted:{tmp_path / 's.json'}", "--workspace", str(tmp_path)],
        stderr=subprocess.PIPE, text=True, preexec_fn=small_files,
    )  # fmt: skip
    assert process.stderr is not None
    try:
        url = process.stderr.readline().split(" on ")[1].split()[0]
        started = httpx.post(f"{url}/api/runs", json={"prompt": "p", "tools": ["echo"]})
        assert started.status_code == 201, started.text
        run_id = started.json()["run_id"]
        deadline = time.monotonic() + 60
        while httpx.get(f"{url}/api/runs/{run_id}").json()["status"] == "running":
            assert time.monotonic() < deadline, "the run never ended"
            time.sleep(0.1)  # polling the run's status, with a deadline
    finally:
        process.terminate()
        err = process.communicate(timeout=20)[1]
    assert f"run {run_id} failed: the run store failed: run store " in err, err
    assert "Traceback" not in err and "never retrieved" not in err, err
