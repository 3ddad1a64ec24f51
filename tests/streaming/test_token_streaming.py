"""Token streaming through the engine: each adapter over a real HTTP server on loopback
streams the model's text as `model_text_delta` events to whoever listens, coalesced and
scrubbed, never stored and never replayed; nobody listening means no streaming at all."""

from __future__ import annotations

import json
from typing import Any

import pytest
from stream_server import Reply, anthropic_sse, ollama_ndjson, openai_sse, stream_server

from loopwright import AgentExecutor
from loopwright.effects import DeltaSettings, EventLog, LiveEffects
from loopwright.effects._deltas import ready_length
from loopwright.events import (
    Event,
    IterationStartedEvent,
    ModelResponseEvent,
    ModelTextDeltaEvent,
    RunFinishedEvent,
    event_from_dict,
    event_to_dict,
)
from loopwright.messages import Message, ModelRequest
from loopwright.models import AnthropicModel, OllamaModel, OpenAIModel, RetryPolicy
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel

HttpAdapter = OpenAIModel | OllamaModel | AnthropicModel


ANSWER = '{"thought": "The sum is easy", "final_answer": "17 + 25 is 42."}'
PIECES = [ANSWER[i : i + 5] for i in range(0, len(ANSWER), 5)]
EVERY_PIECE = DeltaSettings(interval_s=0.0, max_chars=1)


def make(provider: str, url: str) -> HttpAdapter:
    retry = RetryPolicy(max_retries=0)
    if provider == "openai":
        return OpenAIModel("m", base_url=f"{url}/v1", retry=retry)
    if provider == "ollama":
        return OllamaModel("m", base_url=url, tool_mode="prompted", retry=retry)
    return AnthropicModel("m", base_url=url, api_key="test-key", tool_mode="prompted", retry=retry)


REPLIES = {"openai": openai_sse, "ollama": ollama_ndjson, "anthropic": anthropic_sse}


async def run_listened(
    agent: AgentExecutor, request: str, settings: DeltaSettings | None = EVERY_PIECE
) -> list[Event]:
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    log = EventLog("run_stream", scrubber=agent.scrubber, sink=sink)
    await agent.run_with(
        LiveEffects(log, deltas=settings), agent.setup(request, agent.run_context("run_stream"))
    )
    return events


@pytest.mark.parametrize("provider", list(REPLIES))
async def test_each_adapter_streams_its_text_as_deltas(provider: str) -> None:
    with stream_server() as server:
        server.replies.append(REPLIES[provider](PIECES))
        agent = AgentExecutor(make(provider, server.url))
        events = await run_listened(agent, "What is 17 + 25?")
    assert server.bodies[0]["stream"] is True
    deltas = [e for e in events if isinstance(e, ModelTextDeltaEvent)]
    assert "".join(d.text for d in deltas) == ANSWER
    types = [e.type for e in events]
    first, last = (
        types.index("model_text_delta"),
        len(types) - types[::-1].index("model_text_delta"),
    )
    assert types[first - 1] == "iteration_started" and types[last] == "model_response"
    started = next(e for e in events if isinstance(e, IterationStartedEvent))
    assert {d.seq for d in deltas} == {started.seq}  # they take no seq of their own
    responded = next(e for e in events if isinstance(e, ModelResponseEvent))
    assert responded.seq == started.seq + 1 and responded.final_answer == "17 + 25 is 42."


async def test_nobody_listening_means_no_deltas_and_streams_only_to_stop() -> None:
    """An agent's request streams to be able to stop at the reply's action
    (test_stop_at_action.py); a request that does not ask to stop is a whole one."""
    with stream_server() as server:
        server.replies += [openai_sse(PIECES), openai_sse(PIECES)]
        model = make("openai", server.url)
        heard: list[str] = []
        model.on_text = heard.append
        result = await AgentExecutor(model).run("What is 17 + 25?")
        await model.complete(ModelRequest(messages=(Message.user("What is 17 + 25?"),)))
    assert result.answer == "17 + 25 is 42."
    assert [body["stream"] for body in server.bodies] == [True, False]
    assert "".join(heard) == ANSWER  # the streamed one: a whole reply has no pieces


async def test_stream_false_on_the_model_turns_it_off() -> None:
    with stream_server() as server:
        server.replies.append(openai_sse(PIECES))
        model = OpenAIModel("m", base_url=f"{server.url}/v1", stream=False)
        events = await run_listened(AgentExecutor(model), "What is 17 + 25?")
    assert server.bodies[0]["stream"] is False
    assert not [e for e in events if isinstance(e, ModelTextDeltaEvent)]


async def test_deltas_are_coalesced() -> None:
    """A burst that arrives at once is one delta; a slow stream is one delta per interval."""
    model = ScriptedModel([ANSWER], stream_chars=1)
    events = await run_listened(AgentExecutor(model), "q", DeltaSettings(interval_s=60.0))
    deltas = [e.text for e in events if isinstance(e, ModelTextDeltaEvent)]
    assert "".join(deltas) == ANSWER
    assert len(deltas) <= 3  # 61 pieces: held for the interval, then whole words at the end
    many = await run_listened(
        AgentExecutor(ScriptedModel([ANSWER], stream_chars=1)), "q", DeltaSettings(0.0, 10_000)
    )
    assert len([e for e in many if isinstance(e, ModelTextDeltaEvent)]) >= 8


async def test_a_secret_cut_across_pieces_never_shows_in_a_delta() -> None:
    secret = "AKIA" + "Z7Q4LMNB2XK9PQRS"
    text = f'{{"thought": "the key is {secret} and more", "final_answer": "done"}}'
    model = ScriptedModel([text], stream_chars=3)  # the key arrives in 6 pieces
    events = await run_listened(AgentExecutor(model), "q")
    deltas = [e.text for e in events if isinstance(e, ModelTextDeltaEvent)]
    assert len(deltas) > 5
    shown = "".join(deltas)
    assert secret not in shown and "AKIA" not in shown
    assert "[REDACTED" in shown and shown.endswith('"final_answer": "done"}')
    wire = json.dumps([event_to_dict(e) for e in events])
    assert secret not in wire


def test_held_back_text_is_the_last_word_and_open_key_blocks() -> None:
    assert ready_length("one two thr", final=False) == len("one two ")
    assert ready_length("one two thr", final=True) == len("one two thr")
    pem = "key: -----BEGIN PRIVATE KEY-----\nMIIE abc\n"
    assert ready_length(pem, final=False) == len("key: ")
    assert ready_length(pem + "-----END PRIVATE KEY----- ok", final=False) == len(pem) + 26


def test_the_delta_event_round_trips_on_the_wire() -> None:
    delta = ModelTextDeltaEvent(run_id="r", seq=3, ts=1.0, text="abc", model="m")
    assert event_from_dict(json.loads(json.dumps(event_to_dict(delta)))) == delta


async def test_runtime_sends_deltas_to_followers_and_never_stores_them(tmp_path: Any) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    model = ScriptedModel([ANSWER], stream_chars=4)
    handle = runtime.start_agent(AgentExecutor(model), "q", run_id="run_rt")
    seen = [event async for event in runtime.follow("run_rt")]
    result = await handle.wait()
    assert result.answer == "17 + 25 is 42."
    assert any(isinstance(e, ModelTextDeltaEvent) for e in seen)
    assert isinstance(seen[-1], RunFinishedEvent)
    stored = store.events("run_rt")
    assert [e.type for e in stored] == [e.type for e in seen if e.type != "model_text_delta"]
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    # a replay of the stored log is served from it: no model call, no delta
    replayed: list[Event] = []

    async def sink(event: Event) -> None:
        replayed.append(event)

    again = AgentExecutor(ScriptedModel([], stream_chars=4, strict=False))
    await again.run("q", run_id="run_rt", recorded=stored, on_event=sink)
    assert not [e for e in replayed if isinstance(e, ModelTextDeltaEvent)]
    store.close()


async def test_agent_stream_yields_deltas() -> None:
    agent = AgentExecutor(ScriptedModel([ANSWER], stream_chars=2))
    events = [event async for event in agent.stream("q")]
    deltas = [e for e in events if isinstance(e, ModelTextDeltaEvent)]
    assert deltas and "".join(d.text for d in deltas) == ANSWER


HOLD_AFTER = {"openai": 6, "ollama": 5, "anthropic": 7}
"""Where the server holds each stream: after the first five pieces of text."""


@pytest.mark.parametrize("provider", list(REPLIES))
async def test_a_reply_held_mid_stream_has_shown_its_first_words(provider: str) -> None:
    """The listener has the first words while the server still holds the rest."""
    with stream_server() as server:
        reply: Reply = REPLIES[provider](PIECES)
        reply.hold_after = HOLD_AFTER[provider]
        server.replies.append(reply)
        agent = AgentExecutor(make(provider, server.url))
        before_release = ""

        async def sink(event: Event) -> None:
            nonlocal before_release
            if isinstance(event, ModelTextDeltaEvent) and not reply.release.is_set():
                before_release = event.text  # the server has sent 25 characters so far
                reply.release.set()

        log = EventLog("run_held", sink=sink)
        result = await agent.run_with(
            LiveEffects(log, deltas=EVERY_PIECE), agent.setup("q", agent.run_context("run_held"))
        )
    assert result.answer == "17 + 25 is 42."
    assert before_release and ANSWER[:25].startswith(before_release)


async def test_seed_004_agent_step_passes_the_model_text_through(tmp_path: Any) -> None:
    """A streaming model in a task's agent step: the `stream` chunks are its text as it
    was generated (not the parsed thought and answer afterwards)."""
    from loopwright.compat import Settings, StepDefinition, TaskDefinition, TaskExecutor

    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = Settings(data_dir=tmp_path / "data", workspace=workspace, tools=[])
    steps = [StepDefinition("explain", "agent", "Say how many devices hq has.")]
    definition = TaskDefinition("inventory", "analyst", ("inventory",), "low", steps, {})
    engine = ScriptedModel([ANSWER], stream_chars=5)
    events = [
        e async for e in TaskExecutor(engine, settings).execute(definition, "hq?", {}, "acme")
    ]
    chunks = [e["chunk"] for e in events if e["type"] == "stream"]
    assert "".join(chunks) == ANSWER  # the raw text, whatever the coalescing made of it
    assert "17 + 25 is 42." not in chunks  # the parsed answer is not repeated after it
    assert events[-1]["type"] == "task_complete" and events[-1]["status"] == "completed"
