"""Text PostgreSQL will not hold as it is (NUL, a lone surrogate) in a Temporal run: in
the model's replies and in tool results, short and long (a long one is a reference to the
content store's blobs). The run completes, and its events, the model's stored requests
and the content store read each text back exactly: the model's last request, loaded from the
content store, equals the one the embedded engine sends."""

from __future__ import annotations

import json
from pathlib import Path

from temporal_helpers import TemporalRuns, Workers, final

from loopwright.engines.temporal._content import ContentStore
from loopwright.engines.temporal._refs import digest_of, digests_in, expand
from loopwright.events import ModelResponseEvent, RunFinishedEvent, ToolCallEvent
from loopwright.messages import Message
from loopwright.runtime import RunSpec, Runtime
from loopwright.store import open_store
from loopwright.testing import InMemoryRunStore, ScriptedModel

SHORT = "a\x00b\ud800c"
LONG = "x" * 3000 + "\x00 and \udfff"
THOUGHT = "look\x00 here"
ANSWER = "done\x00 \ud83d"


def text_reply(thought: str, text: str) -> str:
    """A reply in the Action / Action Input format, its thought holding `thought` as it is."""
    return f"Thought: {thought}\nAction: echo\nAction Input: {json.dumps({'text': text})}"


async def embedded_request(spec: RunSpec, script: Path, call: int) -> list[Message]:
    """The messages of model call `call` of the same run on the embedded engine."""
    model = ScriptedModel.from_file(script)
    runtime = Runtime(InMemoryRunStore())
    try:
        assert (await runtime.start(spec, model=model).wait()).status == "completed"
    finally:
        runtime.close()
    return list(model.requests[call].messages)


async def test_nul_and_lone_surrogates_travel_and_read_back_exactly(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    script = tmp_path / "script.json"
    replies = [text_reply(THOUGHT, SHORT), text_reply("again", LONG), final(ANSWER)]
    script.write_text(json.dumps(replies))
    spec = RunSpec(request="echo odd text", model=f"scripted:{script}", tools=("echo",),
                   workspace=str(tmp_path))  # fmt: skip
    workers.start()
    handle = await runs.start(spec)
    assert (await handle.result())["status"] == "completed", workers.logs()

    store = open_store(workers.store)
    content = ContentStore(workers.store)
    try:
        events = store.events(handle.id)
        stored_request = [m.to_dict() for m in content.load_request(handle.id, 2)]
        blobs = content.blobs(handle.id, digests_in(stored_request))
    finally:
        content.close()
        store.close()
    assert [e.result for e in events if isinstance(e, ToolCallEvent)] == [SHORT, LONG]
    responses = [e for e in events if isinstance(e, ModelResponseEvent)]
    assert responses[0].thought == THOUGHT
    assert responses[0].response["text"] == replies[0]
    assert [e.answer for e in events if isinstance(e, RunFinishedEvent)] == [ANSWER]
    last_request = [Message.from_dict(m) for m in expand(stored_request, blobs)]
    assert last_request == await embedded_request(spec, script, 2)
    assert any(SHORT in m.content for m in last_request)
    assert any(LONG in m.content for m in last_request)
    assert blobs == {digest_of(LONG): LONG}
