"""A run with an output type on Temporal: the provider is asked for the schema on every
call (the model activity builds the request's output schema from the run's spec, as the
embedded loop does) and the run's answer is the validated value."""

from __future__ import annotations

import json
from pathlib import Path

from temporal_helpers import Provider, TemporalRuns, Workers, completion

from loopwright.runtime import RunSpec

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "people": {"type": "integer"}},
    "required": ["city", "people"],
}


async def test_the_output_schema_reaches_the_provider(
    workers: Workers, provider: Provider, tmp_path: Path, runs: TemporalRuns
) -> None:
    answer = json.dumps({"final_answer": {"city": "Lyon", "people": 522000}})
    provider.replies.append((200, {}, completion(answer)))
    spec = RunSpec(
        request="the city and its people",
        model="openai:test-model",
        base_url=f"http://127.0.0.1:{provider.server_address[1]}/v1",
        workspace=str(tmp_path),
        output_schema=SCHEMA,
    )
    workers.start()
    handle = await runs.start(spec)
    outcome = await handle.result()
    assert outcome["status"] == "completed", f"{outcome}\n{workers.logs()}"
    assert json.loads(outcome["answer"]) == {"city": "Lyon", "people": 522000}
    assert len(provider.bodies) == 1
    sent = json.dumps(provider.bodies[0]["response_format"])
    assert '"people"' in sent and '"city"' in sent
