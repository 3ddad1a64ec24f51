"""Nothing secret in plain text in a Temporal history: a run whose request holds a token and
whose model reply says `password=...` leaves neither in its history as Temporal stores it
(fetched through the client, every payload's bytes searched); decrypted with the run's key
they are there, so the search would see them. A worker with another key refuses the run's
payloads, saying which keys differ; one with the right key then runs it."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

from temporal_helpers import Workers, action, final, payloads_of
from temporalio.api.common.v1 import Payload
from trial_helpers import until

from loopwright.engines.temporal import connect
from loopwright.engines.temporal._client import start_agent_run  # its workflow task timeout
from loopwright.engines.temporal._codec import KEY_ENV, PayloadCipher, load_cipher
from loopwright.runtime import RunSpec

TOKEN = "ghp_" + "Zq8Lw3Rt5Yx7Mn2Bv4Cd6Fg9Hj1Kp0Ss3Tu"  # secret-shaped, in the request
PASSWORD = "Tr0ub4dor-xq7-lantern"  # in the model's reply
WORKFLOW_TASK_S = 3.0


def _text(payloads: list[Payload]) -> str:
    return "\n".join(p.data.decode("utf-8", "replace") for p in payloads)


async def test_no_secret_in_plain_text_in_the_history(
    workers: Workers, tmp_path: Path, payload_key: Path
) -> None:
    script = tmp_path / "script.json"
    replies = [action("echo", text=f"password={PASSWORD}"),
               final(f"done: the password={PASSWORD}")]  # fmt: skip
    script.write_text(json.dumps(replies), encoding="utf-8")
    spec = RunSpec(request=f"deploy with {TOKEN}", model=f"scripted:{script}", tools=("echo",),
                   workspace=str(tmp_path))  # fmt: skip
    other_key = tmp_path / "other.key"
    other_key.write_text(base64.b64encode(b"k" * 32).decode())
    other_key.chmod(0o600)
    wrong = workers.start(**{KEY_ENV: str(other_key)})
    client = await connect(workers.address)
    # the wrong worker leaves a retry of the workflow task it refused unanswered: the right
    # one gets it after this timeout (Temporal's default: 10 s)
    handle = await start_agent_run(
        client, spec, task_queue=workers.queue, workflow_task_timeout_s=WORKFLOW_TASK_S
    )
    await until(lambda: "was encrypted with key" in workers.log_of(0), workers.logs, 60)
    wrong.terminate()
    wrong.wait(timeout=30)
    workers.start()
    outcome = await asyncio.wait_for(handle.result(), 120)
    assert outcome["status"] == "completed", workers.logs()

    history = await handle.fetch_history()
    payloads = [p for event in history.events for p in payloads_of(event)]
    assert len(payloads) > 10
    stored = history.to_json() + _text(payloads)
    for secret in (TOKEN, PASSWORD, "password="):
        assert secret not in stored
    cipher, other = load_cipher(payload_key), PayloadCipher(b"k" * 32)
    keys = {p.metadata["loopwright-key-id"].decode() for p in payloads}
    assert keys == {cipher.key_id, other.key_id}  # each encrypted (the other key: the
    # failure the wrong worker reported, its message encrypted too)
    mine = [p for p in payloads if p.metadata["loopwright-key-id"] == cipher.key_id.encode()]
    plain = _text(await cipher.decode(mine))
    assert TOKEN in plain and f"password={PASSWORD}" in plain  # what the search looked for
    log = workers.log_of(0)
    assert cipher.key_id in log and other.key_id in log
