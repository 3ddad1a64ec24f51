"""RunSpec versions: a run recorded under an older spec resumes and replays as it ran.

`run_spec_v1_repetition.jsonl` is frozen: recorded before RunSpec v2 (commit 0f1fa96), a
scripted run that calls `echo` three times the same way and stops on repetition. Version 2
turned the last turn on by default; a version-1 spec must read it as off.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.agent import AgentExecutor
from loopwright.errors import ConfigurationError
from loopwright.events import RunStartedEvent, decode_event, event_from_dict, event_to_dict
from loopwright.models import Model
from loopwright.runtime import RunSpec, replay_run
from loopwright.runtime._spec import RUN_SPEC_VERSION, build_agent, recorded_spec
from loopwright.store import SqliteRunStore
from loopwright.tools import resolve_tools

FIXTURE = Path(__file__).parents[1] / "fixtures" / "run_spec_v1_repetition.jsonl"


def v1_events() -> list[Any]:
    return [decode_event(line) for line in FIXTURE.read_text().splitlines()]


def stored(tmp_path: Path, events: list[Any]) -> SqliteRunStore:
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append_many(events)
    return store


def replay_as_revision(tmp_path: Path, fixture: Path, run_id: str, revision: int) -> Any:
    """Replay a frozen run with its recorded `options.revision` (the spec's and the run's)
    rewritten to `revision`."""
    events = [decode_event(line) for line in fixture.read_text().splitlines()]
    first = event_to_dict(events[0])
    first["spec"] = {**first["spec"], "options": {**first["spec"]["options"], "revision": revision}}
    first["options"] = {**first["options"], "revision": revision}  # as if it had run so
    events[0] = event_from_dict(first)
    return asyncio.run(replay_run(stored(tmp_path, events), run_id))


def test_a_version_1_spec_reads_the_last_turn_as_off() -> None:
    spec = recorded_spec(v1_events())
    assert spec is not None and spec.options.last_turn is False
    assert spec.version == RUN_SPEC_VERSION == 10  # read as today's spec, v1's behaviour kept
    again = RunSpec.from_dict(spec.to_dict())
    assert again.options.last_turn is False  # the kept behaviour survives a round trip


def test_a_spec_of_today_or_without_a_version_has_the_last_turn_on() -> None:
    assert RunSpec(request="r").options.last_turn is True
    assert RunSpec.from_dict({"request": "r"}).options.last_turn is True
    assert RunSpec.from_dict({"request": "r", "version": 2}).options.last_turn is True


def test_an_unknown_spec_version_names_the_versions_this_loopwright_reads() -> None:
    with pytest.raises(ConfigurationError, match=r"version 11 .* reads 1, 2, .*, 9, 10\): up"):
        RunSpec.from_dict({"request": "r", "version": 11})


def test_a_run_recorded_before_the_last_turn_replays_without_one(tmp_path: Path) -> None:
    events = v1_events()
    assert events[-2].type == "run_stopped" and events[-2].reason == "repetition"
    report = asyncio.run(replay_run(stored(tmp_path, events), "r_v1_repetition"))
    assert report.ok, report.describe()
    assert report.events == len(events)


def test_the_same_run_read_as_version_2_would_ask_for_a_last_turn(tmp_path: Path) -> None:
    """The contrast that shows the version matters: as a v2 spec, the replay makes a
    model call the run never made, and the replay says where."""
    events = v1_events()
    first = event_to_dict(events[0])
    first["spec"] = {**first["spec"], "version": 2}
    events[0] = event_from_dict(first)
    assert isinstance(events[0], RunStartedEvent)
    report = asyncio.run(replay_run(stored(tmp_path, events), "r_v1_repetition"))
    assert not report.ok and report.divergence is not None
    assert report.divergence.expected == "run_stopped"
    assert "warning" in report.divergence.actual
    assert json.loads(FIXTURE.read_text().splitlines()[0])["spec"]["version"] == 1


V2_FIXTURE = Path(__file__).parents[1] / "fixtures" / "run_spec_v2_extra.jsonl"
"""Frozen: recorded with RunSpec v2 (main at aafbfe0, `AgentOptions(extra={"reply_grammar":
True})`, the `read` tool on a workspace): its options keep `reply_grammar` and the prompt's
`workspace_context` in an `extra` dict, which version 3 made typed fields."""


def test_a_version_2_spec_reads_its_extra_options_as_fields(tmp_path: Path) -> None:
    events = [decode_event(line) for line in V2_FIXTURE.read_text().splitlines()]
    started = events[0]
    assert isinstance(started, RunStartedEvent) and "extra" in started.options
    spec = recorded_spec(events)
    assert spec is not None and spec.options.reply_grammar is True
    assert RunSpec.from_dict(spec.to_dict()).options.reply_grammar is True
    # the replay rebuilds every request the run sent (its fingerprint covers the prompt with
    # the recorded workspace section and the reply grammar's schema): none differs
    report = asyncio.run(replay_run(stored(tmp_path, events), "r_v2_extra"))
    assert report.ok, report.describe()
    assert report.events == len(events)


V4_FIXTURES = {
    "r_v4_echo": Path(__file__).parents[1] / "fixtures" / "run_spec_v4_echo.jsonl",
    "r_v4_workspace": Path(__file__).parents[1] / "fixtures" / "run_spec_v4_workspace.jsonl",
}
"""Frozen: recorded with RunSpec v4 (main at a9a1ba4, the CLI with a scripted model in
prompted mode): `echo` alone (the plain example) and `read` + `edit_file` on a workspace
(the file-work example). Their system prompt is revision 2's: the JSON format over several
lines with `"is_final"`, which revision 3 writes on one line without it."""


def test_a_version_4_run_read_as_revision_3_diverges_at_its_first_request(tmp_path: Path) -> None:
    """The contrast: with today's prompt the replay's first request is not the one the run
    sent, and the replay says so."""
    report = replay_as_revision(tmp_path, V4_FIXTURES["r_v4_echo"], "r_v4_echo", 3)
    assert not report.ok and report.divergence is not None


V5_FIXTURES = {
    "r_v5_echo": Path(__file__).parents[1] / "fixtures" / "run_spec_v5_echo.jsonl",
    "r_v5_workspace": Path(__file__).parents[1] / "fixtures" / "run_spec_v5_workspace.jsonl",
}
"""Frozen: recorded with RunSpec v5 (main at b442cc4, the same two CLI runs as the v4
ones). Their system prompt is revision 3's: the run's tools before the format, the rules
and the example, which revision 4 puts last."""


REPLAYED = [(run_id, V4_FIXTURES[run_id], 2) for run_id in sorted(V4_FIXTURES)] + [
    (run_id, V5_FIXTURES[run_id], 3) for run_id in sorted(V5_FIXTURES)
]
"""Each frozen v4/v5 run, with the prompt revision its spec version reads."""


@pytest.mark.parametrize(("run_id", "fixture", "revision"), REPLAYED)
def test_a_run_of_an_older_spec_replays_with_the_prompt_it_had(
    tmp_path: Path, run_id: str, fixture: Path, revision: int
) -> None:
    events = [decode_event(line) for line in fixture.read_text().splitlines()]
    spec = recorded_spec(events)
    assert spec is not None and spec.options.revision == revision
    report = asyncio.run(replay_run(stored(tmp_path, events), run_id))
    assert report.ok, report.describe()
    assert report.events == len(events)


@pytest.mark.parametrize("run_id", sorted(V5_FIXTURES))
def test_a_version_5_run_read_as_revision_4_diverges_at_its_first_request(
    tmp_path: Path, run_id: str
) -> None:
    report = replay_as_revision(tmp_path, V5_FIXTURES[run_id], run_id, 4)
    assert not report.ok and report.divergence is not None
    assert report.divergence.seq == 3  # the first model_response: its request differs


V6_FIXTURES = {
    "r_v6_echo": Path(__file__).parents[1] / "fixtures" / "run_spec_v6_echo.jsonl",
    "r_v6_workspace": Path(__file__).parents[1] / "fixtures" / "run_spec_v6_workspace.jsonl",
}
"""Frozen: recorded with RunSpec v6 (main at 9107226, the same two CLI runs as the v5
ones). Revision 5's system prompt has another example (two calls), and it leaves each
request's note in the conversation, which revision 4 took out."""


@pytest.mark.parametrize("run_id", sorted(V6_FIXTURES))
def test_a_version_6_run_replays_with_the_notes_it_had(tmp_path: Path, run_id: str) -> None:
    events = [decode_event(line) for line in V6_FIXTURES[run_id].read_text().splitlines()]
    spec = recorded_spec(events)
    assert spec is not None and spec.options.revision == 4
    report = asyncio.run(replay_run(stored(tmp_path, events), run_id))
    assert report.ok, report.describe()
    assert report.events == len(events)


@pytest.mark.parametrize("run_id", sorted(V6_FIXTURES))
def test_a_version_6_run_read_as_revision_5_diverges(tmp_path: Path, run_id: str) -> None:
    report = replay_as_revision(tmp_path, V6_FIXTURES[run_id], run_id, 5)
    assert not report.ok and report.divergence is not None
    # echo: the first request (revision 5's example differs); the workspace run keeps its
    # own example, so the second (the first note stayed in the conversation)
    assert report.divergence.seq == {"r_v6_echo": 3, "r_v6_workspace": 7}[run_id]


V7_FIXTURES = {
    "r_v7_echo": Path(__file__).parents[1] / "fixtures" / "run_spec_v7_echo.jsonl",
    "r_v7_workspace": Path(__file__).parents[1] / "fixtures" / "run_spec_v7_workspace.jsonl",
    "r_v7_errors": Path(__file__).parents[1] / "fixtures" / "run_spec_v7_errors.jsonl",
}
"""Frozen: recorded with RunSpec v7 (main at d64ab33, the same two CLI runs as the v6
ones), prompt revision 5 as it stands: the two-call example, each request's note kept in
the conversation, observations that say what their tool returns, and the progress note
that asks for every part of the task. `r_v7_errors` (main at 4566f39): a `read` of a
missing file, then a call to a tool that does not exist, then the answer."""


@pytest.mark.parametrize("run_id", sorted(V7_FIXTURES))
def test_a_version_7_run_replays_with_revision_5(tmp_path: Path, run_id: str) -> None:
    events = [decode_event(line) for line in V7_FIXTURES[run_id].read_text().splitlines()]
    spec = recorded_spec(events)
    assert spec is not None and spec.options.revision == 5
    report = asyncio.run(replay_run(stored(tmp_path, events), run_id))
    assert report.ok, report.describe()
    assert report.events == len(events)


@pytest.mark.parametrize("run_id", sorted(V7_FIXTURES))
def test_a_version_7_run_read_as_revision_4_diverges(tmp_path: Path, run_id: str) -> None:
    report = replay_as_revision(tmp_path, V7_FIXTURES[run_id], run_id, 4)
    assert not report.ok and report.divergence is not None
    # echo: the first request (revision 4's example makes one call); the workspace run has
    # the same example in both, so its second request (the kept note, the observation)
    assert report.divergence.seq == {"r_v7_echo": 3, "r_v7_workspace": 7, "r_v7_errors": 3}[run_id]


@pytest.mark.parametrize("run_id", sorted(V7_FIXTURES))
def test_a_version_7_run_read_as_revision_6_diverges_only_after_a_failed_call(
    tmp_path: Path, run_id: str
) -> None:
    report = replay_as_revision(tmp_path, V7_FIXTURES[run_id], run_id, 6)
    if run_id != "r_v7_errors":  # no call failed: revision 6 reads them as 5 did
        assert report.ok, report.describe()
        return
    assert not report.ok and report.divergence is not None
    # a replay serves the recorded observations (the failed read's with revision 5's advice),
    # so the first difference is the third request: its note follows the call to `search`,
    # a tool the run does not have, with revision 6's hint
    assert report.divergence.seq == 11


V8_FIXTURE = Path(__file__).parents[1] / "fixtures" / "run_spec_v8_echo.jsonl"
"""Frozen: recorded with RunSpec v8 (before follow-ups and forks), a scripted `echo` run
through the Runtime. A version-8 spec is neither a follow-up nor a fork."""


def test_a_version_8_run_reads_as_no_follow_up_and_replays(tmp_path: Path) -> None:
    events = [decode_event(line) for line in V8_FIXTURE.read_text().splitlines()]
    first = events[0]
    assert isinstance(first, RunStartedEvent) and first.spec is not None
    assert first.spec["version"] == 8 and "after" not in first.spec
    spec = recorded_spec(events)
    assert spec is not None and spec.after is None and spec.fork_of is None
    report = asyncio.run(replay_run(stored(tmp_path, events), "r_v8_echo"))
    assert report.ok, report.describe()
    assert report.events == len(events)


def test_a_version_9_spec_carries_its_follow_up_and_fork_through_a_round_trip() -> None:
    data = {"request": "and in EUR?", "after": "run_a", "fork_of": {"run_id": "run_b", "step": 2}}
    spec = RunSpec.from_dict(data)
    assert spec.after == "run_a" and spec.fork_of is not None and spec.fork_of.step == 2
    again = RunSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again == spec and again.to_dict()["fork_of"] == {"run_id": "run_b", "step": 2}
    with pytest.raises(ConfigurationError, match="fork_of must be"):
        RunSpec.from_dict({"request": "r", "fork_of": ["run_b", 2]})


V9_FIXTURE = Path(__file__).parents[1] / "fixtures" / "run_spec_v9_echo.jsonl"
"""Frozen: recorded with RunSpec v9 (main at 72a75be, before a spec could name an agent
built in Python), a scripted `echo` run through the Runtime."""


def test_a_version_9_run_reads_as_naming_no_agent_and_replays(tmp_path: Path) -> None:
    events = [decode_event(line) for line in V9_FIXTURE.read_text().splitlines()]
    first = events[0]
    assert isinstance(first, RunStartedEvent) and first.spec is not None
    assert first.spec["version"] == 9 and "agent" not in first.spec
    spec = recorded_spec(events)
    assert spec is not None and spec.agent is None and spec.tools == ("echo",)
    report = asyncio.run(replay_run(stored(tmp_path, events), "r_v9_echo"))
    assert report.ok, report.describe()
    assert report.events == len(events)


def test_a_version_10_spec_carries_its_agent_through_a_round_trip() -> None:
    spec = RunSpec.from_dict({"request": "shout hi", "agent": " my_agents:agent "})
    assert spec.agent == "my_agents:agent" and spec.version == 10
    again = RunSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again == spec and again.to_dict()["agent"] == "my_agents:agent"
    for bad in ("", 42):
        with pytest.raises(ConfigurationError, match="agent must be module:attribute"):
            RunSpec.from_dict({"request": "r", "agent": bad})


def test_a_spec_naming_an_agent_is_not_built_from_its_fields() -> None:
    """Only a worker started with the agent builds such a run: building it from the spec
    (which names no tools, model or instructions of the agent) would run another agent."""
    spec = RunSpec(request="shout hi", model="scripted:/nowhere.json", agent="my_agents:agent")
    with pytest.raises(ConfigurationError, match="workers started with --agent my_agents:agent"):
        build_agent(spec)


V10_FIXTURE = Path(__file__).parents[1] / "fixtures" / "run_spec_v10_agent.jsonl"
"""Frozen: recorded with RunSpec v10 on a Temporal worker started with `--agent
agents.py:echoer` (an agent built in Python: a ScriptedModel named `echo-agent-model` and
the `echo` tool), started by `loopwright run --agent agents.py:echoer --engine temporal`
(the reference rewritten from the test's folder, the run id made readable)."""


def test_a_version_10_run_names_its_agent_and_replays_with_that_agent(tmp_path: Path) -> None:
    events = [decode_event(line) for line in V10_FIXTURE.read_text().splitlines()]
    first = events[0]
    assert isinstance(first, RunStartedEvent) and first.spec is not None
    assert first.spec["version"] == 10 and first.model == "echo-agent-model"
    spec = recorded_spec(events)
    assert spec is not None and spec.agent == "agents.py:echoer" and spec.tools == ()
    store = stored(tmp_path, events)
    with pytest.raises(ConfigurationError, match=r"workers started with --agent agents\.py:echoer"):
        asyncio.run(replay_run(store, "r_v10_agent"))  # not from the spec's fields

    def the_agent(_: RunSpec, stand_in: Model) -> AgentExecutor:
        # as the worker's is built today: the run goes on with the revision it recorded (7)
        return AgentExecutor(stand_in, resolve_tools(["echo"]))

    report = asyncio.run(replay_run(store, "r_v10_agent", build=the_agent))
    assert report.ok, report.describe()
    assert report.events == len(events)
