"""Someone who reaches the Temporal frontend without loopwright's key (any Temporal client:
the SDK with its default converter, `temporal workflow start`) can neither start a run nor
decide a gate: workers take only payloads sealed under the deployment's key. And a gate's
id is not what anyone can compute from a run's id and its call's: a client holding the
key that names a gate by those values decides nothing either."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from temporal_helpers import AGENT_RUN, Workers, action, final, gates_opened
from temporalio.client import Client
from trial_helpers import until

from loopwright.agent._approval import approval_request_id
from loopwright.engines.temporal import TemporalEngine, connect
from loopwright.engines.temporal._approvals import APPROVE, GateDecision, decide
from loopwright.errors import UsageError
from loopwright.events import ConfirmationRequiredEvent, GateDecisionEvent, ModelResponseEvent
from loopwright.runtime import RunSpec, Runtime
from loopwright.store import PersistentStore, open_store

REFUSED = "refused a Temporal payload that is not encrypted with loopwright's key"


@asynccontextmanager
async def temporal_runtime(workers: Workers) -> AsyncIterator[Runtime]:
    """A Runtime whose runs are workflows on the test's workers (its own store handle)."""
    store = open_store(workers.store)
    engine = TemporalEngine(workers.address, store, task_queue=workers.queue)
    runtime = Runtime(store, engine=engine)
    try:
        yield runtime
    finally:
        runtime.close()
        await runtime.aclose()
        store.close()


async def test_a_keyless_client_cannot_start_a_run(workers: Workers, tmp_path: Path) -> None:
    """The attack: a run whose spec enables commands and a verify command, started by a
    plain Temporal client, on a worker that would run them for a holder of the key."""
    ran, verified = tmp_path / "ran", tmp_path / "verified"
    script = tmp_path / "script.json"
    replies = [action("run_command", command=f"id > {ran}", shell=True), final("done")]
    script.write_text(json.dumps(replies))
    spec = RunSpec(request="check the host", model=f"scripted:{script}",
                   tools=("run_command",), allow_commands=True, verify=f"id > {verified}",
                   workspace=str(tmp_path))  # fmt: skip
    workers.start("--allow-commands", "--allow-verify")
    stranger = await Client.connect(workers.address)  # Temporal's own converter: no key
    run_id = f"run_{uuid.uuid4().hex[:16]}"
    handle = await stranger.start_workflow(
        AGENT_RUN, {"run_id": run_id, "spec": spec.to_dict()}, id=run_id, task_queue=workers.queue
    )
    try:  # the worker refuses the run's input, or (before payloads were checked) runs it
        await until(lambda: REFUSED in workers.logs() or ran.exists(), workers.logs, 60)
    finally:
        await handle.terminate("the test ends")
    assert not ran.exists() and not verified.exists(), workers.logs()
    assert REFUSED in workers.logs()
    store = open_store(workers.store)
    try:
        assert store.events(run_id) == [] and store.get_run(run_id) is None  # nothing ran
    finally:
        store.close()


async def _waiting_gate(store: PersistentStore, run_id: str) -> tuple[str, str]:
    """The run's waiting gate (its id) and the id of the call it holds."""
    for _ in range(600):
        events = store.events(run_id)
        asked = [e for e in events if isinstance(e, ConfirmationRequiredEvent)]
        if asked:
            [response] = [e for e in events if isinstance(e, ModelResponseEvent)]
            return asked[0].request_id, response.actions[0]["id"]
        await store.wait_for_events(run_id, after=len(events), timeout=0.2)
    raise AssertionError(f"run {run_id} never asked")


async def test_a_gate_is_decided_only_by_its_id_and_only_with_the_key(
    workers: Workers, tmp_path: Path
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([action("echo", text="hello"), final("said hello")]))
    spec = RunSpec(request="say hello", model=f"scripted:{script}", tools=("echo",),
                   approve=("echo",), workspace=str(tmp_path))  # fmt: skip
    workers.start()
    async with temporal_runtime(workers) as runtime:
        handle = runtime.start(spec)
        store = runtime.store
        assert isinstance(store, PersistentStore)
        gate, call_id = await _waiting_gate(store, handle.run_id)
        client = await connect(workers.address)
        await gates_opened(client.get_workflow_handle(handle.run_id))

        public = approval_request_id(handle.run_id, call_id)  # the run's id, the call's
        assert gate != public and gate.startswith(public + "_")
        with pytest.raises(UsageError, match=f"no gate {public!r} is waiting"):
            await decide(client, handle.run_id, GateDecision(public, True, "mallory"))  # the key

        stranger = await Client.connect(workers.address)  # the right id, but no key
        update = stranger.get_workflow_handle(handle.run_id).execute_update(
            APPROVE, {"gate_id": gate, "approved": True, "by": "mallory", "reason": ""}
        )
        with pytest.raises(Exception):  # noqa: B017  (the update fails, however it is told)
            await asyncio.wait_for(update, 30)
        await until(lambda: REFUSED in workers.logs(), workers.logs, 30)
        assert not [e for e in store.events(handle.run_id) if isinstance(e, GateDecisionEvent)]

        await runtime.approve(handle.run_id, gate, True, "alice")  # the gate still waits
        result = await asyncio.wait_for(handle.wait(), 120)
        assert result.answer == "said hello", workers.logs()
        [decided] = [e for e in store.events(handle.run_id) if isinstance(e, GateDecisionEvent)]
        assert (decided.request_id, decided.decided_by) == (gate, "alice")
