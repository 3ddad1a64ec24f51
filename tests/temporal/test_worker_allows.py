"""A worker decides what its runs may do from its own flags, never from the spec a client
sends: a run asking for commands, a verify command, code (a tool file, a module) or an MCP
server its worker does not allow fails at once, naming each thing it asked for and the flag
that would allow it, and none of it runs; a task run whose task file is not allowed
neither. The worker says at start what it allows."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from task_files import gated_task
from temporal_helpers import TOOLS_FILE, Workers, action, final
from test_keyless_clients import temporal_runtime

from inprocess_cli import CliRun, clean_env
from loopwright.errors import RunError
from loopwright.runtime import RunSpec
from loopwright.tasks import TaskSpec

KEY_ENV = "LOOPWRIGHT_TEMPORAL_KEY_FILE"
"""The variable naming the payload key file (docs/security.md)."""


async def test_a_run_asking_for_more_than_its_worker_allows_fails_naming_the_flags(
    workers: Workers, tmp_path: Path
) -> None:
    ran, verified = tmp_path / "ran", tmp_path / "verified"
    script = tmp_path / "script.json"
    replies = [action("run_command", command=f"id > {ran}", shell=True), final("done")]
    script.write_text(json.dumps(replies))
    server = f"python {tmp_path / 'server.py'}"
    spec = RunSpec(request="check the host", model=f"scripted:{script}",
                   tools=("run_command", f"{TOOLS_FILE}:append_line", "os:system"),
                   allow_commands=True, verify=f"id > {verified}", mcp=(server,),
                   workspace=str(tmp_path))  # fmt: skip
    workers.start(allowing=())  # the default: nothing that runs a program or loads code
    async with temporal_runtime(workers) as runtime:
        handle = runtime.start(spec)
        with pytest.raises(RunError) as refused:
            await asyncio.wait_for(handle.wait(), 120)
        record = runtime.store.get_run(handle.run_id)
    message = str(refused.value)
    assert f"run {handle.run_id} asks for what this worker does not allow" in message
    for asked in (
        "the tool run_command (--allow-commands)",
        f"the tool '{TOOLS_FILE}:append_line' (--allow-tools {TOOLS_FILE.resolve()})",
        "the tool 'os:system' (--allow-tools os)",
        f"the verify command 'id > {verified}' (--allow-verify)",
        f"the MCP server '{server}' (--allow-mcp '{server}')",
    ):
        assert asked in message, message
    assert not ran.exists() and not verified.exists()
    assert record is not None and record.status == "failed"
    assert "runs may use: no commands, verify commands, tool or task files" in workers.logs()


async def test_a_task_file_the_worker_does_not_allow_is_refused(
    workers: Workers, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out.txt"
    task = gated_task(elsewhere)
    allowed = tmp_path / "tasks"  # the worker runs the task files of this folder only
    workers.start(allowing=("--allow-tools", f"{allowed},{TOOLS_FILE.parent}"))
    spec = TaskSpec(task_file=str(task), inputs={"out": str(out)}, workspace=str(tmp_path))
    async with temporal_runtime(workers) as runtime:
        handle = runtime.start_task(spec)
        with pytest.raises(RunError, match=r"the task file .*gated\.yaml' \(--allow-tools "):
            await asyncio.wait_for(handle.wait(), 120)
    assert not out.exists()
    assert f"code in {allowed}" in workers.logs()


def test_loopwright_run_prints_what_its_worker_refused(
    workers: Workers, tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([final("done")]))
    workers.start(allowing=())
    done = run_cli(
        "run", "check the host", "--model", f"scripted:{script}", "--tools", "run_command",
        "--allow-commands", "--engine", "temporal", "--temporal", workers.address,
        "--task-queue", workers.queue, "--store", workers.store, "--workspace", str(tmp_path),
        env=clean_env(tmp_path / "home", **{KEY_ENV: os.environ[KEY_ENV]}),
    )  # fmt: skip
    assert done.code == 1, done.out + done.err
    refused = "asks for what this worker does not allow: the tool run_command (--allow-commands)"
    assert refused in done.err, done.err
