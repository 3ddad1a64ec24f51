"""No secret reaches the content store or the run store in clear, nor Temporal's history in
any form but sealed, for every kind of run on Temporal workers: an agent run (with a
sub-agent) and a task run (with an agent step). Planted: a value only the worker's secrets
file names (a tool reads it, models repeat it) and detector-shaped ones (an API key in the
request, an AWS key in a tool's result, `password=` in the model's reply, a Slack token in
a sub-agent's and an agent step's answer). Afterwards every Postgres row and the workflow
history (as Temporal keeps it, and opened with the key) are read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psycopg
from secret_tools import AWS_KEY, SLACK_TOKEN, agent_step_script
from temporal_helpers import Workers, action, final, payloads_of
from test_keyless_clients import temporal_runtime

from loopwright.engines.temporal import connect
from loopwright.runtime import RunSpec
from loopwright.tasks import TaskSpec

TOOLS = Path(__file__).with_name("secret_tools.py")
REGISTERED = "vq7Rk2mXw9Lp4Tz8"  # no known format: only the worker's secrets file names it
API_KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0f"  # in the request
PASSWORD = "Tr0ub4dor-xq7-lantern"  # in the model's reply, as password=...
WORKER_SIDE = (REGISTERED, AWS_KEY, SLACK_TOKEN)
"""Secrets the worker's tools and models produce: never in the history, even opened."""


def start_worker(workers: Workers, folder: Path) -> None:
    secrets = folder / "worker-secrets.env"
    secrets.write_text(f"VAULT={REGISTERED}\n")
    workers.start("--secrets-file", str(secrets), LOOPWRIGHT_TEST_NOTE=REGISTERED)


def postgres_text(url: str) -> str:
    """Every row of the run store and the content store, as text."""
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema IN ('loopwright', 'loopwright_temporal')"
        ).fetchall()
        return "\n".join(
            str(row)
            for schema, table in tables
            for row in conn.execute(f'SELECT t::text FROM "{schema}"."{table}" t').fetchall()
        )


async def histories(address: str, run_id: str) -> tuple[str, str]:
    """The run's workflow history as Temporal keeps it, and opened with the key."""
    client = await connect(address)
    history = await client.get_workflow_handle(run_id).fetch_history()
    payloads = [p for event in history.events for p in payloads_of(event)]
    stored = history.to_json() + "\n".join(p.data.decode("utf-8", "replace") for p in payloads)
    codec = client.data_converter.payload_codec  # loopwright's, as `connect` sets it up
    assert codec is not None
    opened = await codec.decode(payloads)
    return stored, "\n".join(p.data.decode("utf-8", "replace") for p in opened)


def assert_kept_out(url: str, stored: str, opened: str, *, planted: tuple[str, ...]) -> None:
    rows = postgres_text(url)
    for secret in planted:
        assert secret not in rows, f"{secret} in the Postgres rows"
        assert secret not in stored, f"{secret} in the history as Temporal keeps it"
    for secret in WORKER_SIDE:
        assert secret not in opened, f"{secret} in the opened history"
    assert "[REDACTED" in rows  # the search looked where the secrets were


async def test_an_agent_run_and_its_sub_agent_keep_secrets_out(
    workers: Workers, tmp_path: Path
) -> None:
    script = tmp_path / "script.json"
    replies = [
        action("vault", name="lead"),
        action("reader", request="read the vault"),
        final(f"done: the password={PASSWORD}, the note {REGISTERED}"),
    ]
    script.write_text(json.dumps(replies))
    spec = RunSpec(request=f"deploy with {API_KEY}", model=f"scripted:{script}",
                   tools=(f"{TOOLS}:vault", f"{TOOLS}:reader"), workspace=str(tmp_path))  # fmt: skip
    start_worker(workers, tmp_path)
    async with temporal_runtime(workers) as runtime:
        handle = runtime.start(spec)
        result = await asyncio.wait_for(handle.wait(), 120)
        children = [r for r in runtime.store.list_runs() if r.parent_run_id == handle.run_id]
    assert result.status == "completed", workers.logs()
    assert len(children) == 1 and children[0].status == "completed"
    stored, opened = await histories(workers.address, handle.run_id)
    assert API_KEY in opened and f"password={PASSWORD}" in opened  # the request, the reply:
    # in the history only sealed
    assert_kept_out(workers.store, stored, opened,
                    planted=(*WORKER_SIDE, API_KEY, PASSWORD))  # fmt: skip


TASK = """\
name: read-the-vault
tools: [{tools}]
steps:
  - name: read
    type: tool
    tool: vault
    args: {{name: task}}
  - name: explain
    type: agent
    description: "Say what the vault holds."
"""


async def test_a_task_run_and_its_agent_step_keep_secrets_out(
    workers: Workers, tmp_path: Path
) -> None:
    task = tmp_path / "vault.yaml"
    task.write_text(TASK.format(tools=TOOLS), encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(agent_step_script()))
    spec = TaskSpec(task_file=str(task), model=f"scripted:{script}", workspace=str(tmp_path),
                    state_root=str(tmp_path / "state"))  # fmt: skip
    start_worker(workers, tmp_path)
    async with temporal_runtime(workers) as runtime:
        handle = runtime.start_task(spec)
        state = await asyncio.wait_for(handle.wait(), 120)
    assert state.status == "completed", workers.logs()
    stored, opened = await histories(workers.address, handle.run_id)
    assert_kept_out(workers.store, stored, opened, planted=WORKER_SIDE)
