"""Model calls are retried by Temporal, not by the provider client: a 429 with
`Retry-After: 2` then a 200 makes exactly two HTTP calls at least 2 s apart; a 400 fails the
run after one call. The provider is a real HTTP server on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from temporal_helpers import Provider, TemporalRuns, Workers, completion, final

from loopwright.events import RunErrorEvent, RunFinishedEvent
from loopwright.runtime import RunSpec
from loopwright.store import open_store


async def _run(
    workers: Workers, provider: Provider, tmp_path: Path, runs: TemporalRuns
) -> tuple[dict[str, Any], list[Any]]:
    spec = RunSpec(
        request="answer",
        model="openai:test-model",
        base_url=f"http://127.0.0.1:{provider.server_address[1]}/v1",
        workspace=str(tmp_path),
    )
    workers.start()
    handle = await runs.start(spec)
    outcome = await handle.result()
    store = open_store(workers.store)
    try:
        return outcome, store.events(handle.id)
    finally:
        store.close()


async def test_a_429_is_retried_after_its_retry_after(
    workers: Workers, provider: Provider, tmp_path: Path, runs: TemporalRuns
) -> None:
    provider.replies = [
        (429, {"Retry-After": "2"}, {"error": {"message": "slow down"}}),
        (200, {}, completion(final("done"))),
    ]
    outcome, events = await _run(workers, provider, tmp_path, runs)
    assert outcome["status"] == "completed"
    assert len(provider.calls) == 2
    assert provider.calls[1] - provider.calls[0] >= 2.0
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].answer == "done"


async def test_a_400_fails_the_run_after_one_call(
    workers: Workers, provider: Provider, tmp_path: Path, runs: TemporalRuns
) -> None:
    provider.replies = [(400, {}, {"error": {"message": "bad request"}})] * 3
    outcome, events = await _run(workers, provider, tmp_path, runs)
    assert outcome["status"] == "failed"
    assert len(provider.calls) == 1
    (errored,) = [e for e in events if isinstance(e, RunErrorEvent)]
    assert errored.error_type == "ModelError" and "HTTP 400" in errored.message
