"""Input that used to end in an uncaught traceback ends in one clear error instead: the
server on a damaged SQLite store (a JSON error naming the store, not a plain-text 500),
a deeply nested WebSocket `confirm` frame (the limits of a request body), and a
`loopwright.toml` nested 5,000 deep. (A 500-deep `--output-schema`: test_schema_limits.)"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import httpx
from cli_run import loopwright, script
from test_http_attacks import ACME, TOKENS, Served

from loopwright.runtime import Runtime
from loopwright.server import ServerConfig
from loopwright.store import open_store
from loopwright.testing import InMemoryRunStore


def _damaged_store(tmp_path: Path) -> Path:
    model = script(tmp_path / "s.json", [{"thought": "t", "final_answer": "x" * 3000}])
    for number in range(4):
        done = loopwright("run", f"q{number} " + "y" * 3000, "--model", model, home=tmp_path)
        assert done.code == 0, done.both
    store = tmp_path / "runs.db"
    with sqlite3.connect(store) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = store.stat().st_size
    with store.open("r+b") as file:  # the header stays: the damage shows when pages are read
        file.seek(4096)
        file.write(os.urandom(size - 4096))
    return store


def test_the_server_on_a_damaged_store_answers_json_naming_it(tmp_path: Path) -> None:
    path = _damaged_store(tmp_path)
    store = open_store(path)
    server = Served(ServerConfig(runtime=Runtime(store), tokens=TOKENS, workspace=str(tmp_path)))
    try:
        for route in ("/api/runs", "/api/runs/run_0123456789abcdef"):
            response = httpx.get(f"{server.url}{route}", headers=ACME, timeout=10)
            assert response.status_code == 503, response.text
            message = response.json()["error"]["message"]
            assert f"run store {path} is damaged" in message
        assert httpx.get(f"{server.url}/api/info", headers=ACME).status_code == 200
    finally:
        server.stop()
        store.close()
    listed = loopwright("runs", "list", "--store", str(path), home=tmp_path)
    assert listed.code == 1 and "Traceback" not in listed.both
    assert f"run store {path} is damaged" in listed.err


def test_a_deeply_nested_websocket_frame_gets_an_error_frame(tmp_path: Path) -> None:
    from websockets.sync.client import connect

    allowed = tmp_path / "allowed"
    allowed.mkdir()
    model = script(
        allowed / "s.json",
        [
            {"thought": "t", "action": "echo", "action_input": {"text": "hi"}},
            {"thought": "t", "final_answer": "done"},
        ],
    )
    config = ServerConfig(
        runtime=Runtime(InMemoryRunStore()), tokens=TOKENS, workspace=str(tmp_path),
        allowed_models=frozenset({f"scripted:{allowed}/*"}),
    )  # fmt: skip
    server = Served(config)
    try:
        body = {"prompt": "p", "model": model, "tools": ["echo"], "approve": ["echo"]}
        run_id = httpx.post(f"{server.url}/api/runs", headers=ACME, json=body).json()["run_id"]
        url = (
            f"{server.url.replace('http', 'ws')}/api/runs/{run_id}/ws?access_token=acme-token-1234"
        )
        with connect(url, open_timeout=20) as ws:
            seen = [json.loads(ws.recv(timeout=20))]
            while seen[-1]["type"] != "confirmation_required":
                seen.append(json.loads(ws.recv(timeout=20)))
            deep = "[" * 100_000 + "]" * 100_000
            for frame, expected in (
                ('{"type": "confirm", "approve": true, "request_id": ' + deep + "}", "nests"),
                ('{"type": "confirm", "approve": true, "x": ' + "[" * 80 + "]" * 80 + "}",
                 "message nests deeper than 64 levels"),
                ('{"type": "confirm", "approve": NaN}', "JSON has no NaN"),
            ):  # fmt: skip
                ws.send(frame)
                error = json.loads(ws.recv(timeout=20))
                assert error["type"] == "error" and expected in error["error"]["message"], error
            ws.send(json.dumps({"type": "confirm", "request_id": seen[-1]["request_id"],
                                "approve": True}))  # fmt: skip
            deadline = time.monotonic() + 20
            while seen[-1]["type"] != "run_finished" and time.monotonic() < deadline:
                seen.append(json.loads(ws.recv(timeout=20)))
        assert seen[-1]["type"] == "run_finished" and seen[-1]["status"] == "completed"
    finally:
        server.stop()


def test_a_toml_nested_5000_deep_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "loopwright.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    done = loopwright("config", "show", home=tmp_path)
    assert done.code == 2 and "Traceback" not in done.both
    assert f"{tmp_path / 'loopwright.toml'}: nested too deeply" in done.err
    (tmp_path / "loopwright.toml").write_text("a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n")
    done = loopwright("run", "x", "--model", "scripted:none.json", home=tmp_path)
    assert done.code == 2 and "nested too deeply" in done.err and "Traceback" not in done.both
