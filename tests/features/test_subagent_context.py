"""A sub-agent runs in its lead's run context: the lead's gatekeeper decides its approvals
(also after the lead is resumed), it works in the lead's workspace, and its events are
scrubbed with the lead's secrets."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inprocess_cli import CliRun
from loopwright import AgentExecutor, AgentOptions
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    GateDecisionEvent,
    RunFinishedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
)
from loopwright.safety.scrub import Scrubber
from loopwright.store import SqliteRunStore
from loopwright.tasks import GateBroker
from loopwright.tasks._gates import join_decider
from loopwright.testing import ScriptedModel
from loopwright.tools import BUILTIN_TOOLS, tool

DELETED: list[str] = []


@tool(effect="destructive")
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: the file
    """
    DELETED.append(path)
    return f"deleted {path}"


@tool(effect="read")
def echo(text: str) -> str:
    """Say a text back.

    Args:
        text: what to say
    """
    return text


def call(name: str, **arguments: Any) -> str:
    return json.dumps({"thought": "go", "action": name, "action_input": arguments})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


class Seen:
    """Every event; on `confirmation_required`, the decision `decide` (if any)."""

    def __init__(self, gates: GateBroker | None = None, decide: Any = None) -> None:
        self.events: list[Event] = []
        self.gates = gates
        self.decide = decide

    async def __call__(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, ConfirmationRequiredEvent) and self.decide is not None:
            assert self.gates is not None
            self.gates.resolve(event.request_id, *self.decide)

    def of(self, kind: type[Any], run_id: str | None = None) -> list[Any]:
        found = [e for e in self.events if isinstance(e, kind)]
        return [e for e in found if run_id is None or e.run_id == run_id]

    def child_of(self, run_id: str) -> str:
        """The sub-agent's run that the first call of run `run_id` started."""
        [child] = [e.child_run_id for e in self.of(ToolCallStartedEvent, run_id)]
        assert isinstance(child, str)
        return child


@pytest.fixture(autouse=True)
def _clean() -> None:
    DELETED.clear()


def cleaner(replies: list[str], **kwargs: Any) -> AgentExecutor:
    return AgentExecutor(ScriptedModel(replies, strict=False), [delete_file], **kwargs)


def lead_of(child: AgentExecutor, replies: list[str], **kwargs: Any) -> AgentExecutor:
    tool = child.as_tool("clean", "Clean up.")
    return AgentExecutor(ScriptedModel(replies, strict=False), [tool], **kwargs)


LEAD_REPLIES = [call("clean", request="delete a.txt"), final("cleaned")]
CHILD_REPLIES = [call("delete_file", path="a.txt"), final("deleted a.txt")]


async def test_sub_agent_approval_reaches_the_lead_gatekeeper() -> None:
    gates = GateBroker()
    seen = Seen(gates, (True, "alice"))
    child = cleaner(CHILD_REPLIES, approve=["delete_file"])
    lead = lead_of(child, LEAD_REPLIES)
    result = await lead.run("tidy", on_event=seen, gates=gates, run_id="run_a")
    assert result.answer == "cleaned" and DELETED == ["a.txt"]
    [decided] = seen.of(GateDecisionEvent)
    assert decided.run_id == seen.child_of("run_a")
    assert (decided.approved, decided.decided_by) == (True, "alice")


async def test_resumed_lead_lets_the_waiting_child_ask_its_gatekeeper(tmp_path: Path) -> None:
    gates = GateBroker()
    seen = Seen(gates)
    lead = lead_of(cleaner(CHILD_REPLIES, approve=["delete_file"]), LEAD_REPLIES)
    task = asyncio.ensure_future(lead.run("tidy", on_event=seen, gates=gates, run_id="run_b"))
    while not seen.of(ConfirmationRequiredEvent):
        await asyncio.sleep(0.01)
    task.cancel()  # the process "stops" while the child waits at its approval
    await asyncio.gather(task, return_exceptions=True)
    cut = next(i for i, e in enumerate(seen.events) if isinstance(e, ConfirmationRequiredEvent))
    recorded = seen.events[: cut + 1]
    assert DELETED == []

    child_id = seen.child_of("run_b")
    store = SqliteRunStore(tmp_path / "runs.db")
    open_gate = recorded[-1]  # the child's open gate, as its log recorded it
    assert isinstance(open_gate, ConfirmationRequiredEvent) and open_gate.run_id == child_id
    waiting = open_gate.request_id
    store.post_gate_decision(child_id, waiting, True, join_decider("api:eve", "fine"))
    resumed_gates = GateBroker(store, poll_s=0.02)
    again = Seen(resumed_gates)
    lead = lead_of(cleaner(CHILD_REPLIES, approve=["delete_file"]), LEAD_REPLIES)
    try:
        result = await lead.run("tidy", on_event=again, gates=resumed_gates, recorded=recorded)
    finally:
        store.close()
    [decided] = again.of(GateDecisionEvent)
    assert (decided.run_id, decided.request_id) == (child_id, waiting)
    assert (decided.approved, decided.decided_by, decided.reason) == (True, "api:eve", "fine")
    assert DELETED == ["a.txt"] and result.answer == "cleaned"


async def test_sub_agent_file_tools_stay_in_the_lead_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("the launch code is 0000\n")
    monkeypatch.chdir(elsewhere)  # the process runs from another folder
    tools = [BUILTIN_TOOLS["read"], BUILTIN_TOOLS["write_file"]]
    child_replies = [
        call("write_file", path="escape.txt", content="written"),
        call("read", path="secret.txt"),
        final("done"),
    ]
    child = AgentExecutor(ScriptedModel(child_replies), tools)  # no workspace of its own
    lead = AgentExecutor(
        ScriptedModel([call("work", request="write, then read"), final("ok")]),
        [child.as_tool("work", "Work on files.")],
        workspace=workspace,
    )
    seen = Seen()
    result = await lead.run("go", on_event=seen, run_id="run_w")
    assert result.success
    assert not (elsewhere / "escape.txt").exists()
    assert (workspace / "escape.txt").read_text() == "written"
    child_id = seen.child_of("run_w")
    wrote, read = seen.of(ToolCallEvent, child_id)
    assert not wrote.is_error
    assert read.is_error and "0000" not in read.result
    [finished] = seen.of(RunFinishedEvent, child_id)
    assert finished.status == "completed"


async def test_sub_agent_events_are_scrubbed_with_the_lead_secrets() -> None:
    child = AgentExecutor(
        ScriptedModel([call("echo", text="token hunter2hunter2"), final("said it")]), [echo]
    )
    lead = AgentExecutor(
        ScriptedModel([call("say", request="say the token"), final("ok")]),
        [child.as_tool("say", "Say things.")],
        scrubber=Scrubber.default(["hunter2hunter2"]),
    )
    seen = Seen()
    await lead.run("go", on_event=seen, run_id="run_s")
    child_events = [e for e in seen.events if e.run_id == seen.child_of("run_s")]
    assert child_events and "hunter2hunter2" not in repr(child_events)
    [echoed] = seen.of(ToolCallEvent, seen.child_of("run_s"))
    assert "[REDACTED" in echoed.result


async def test_lead_approval_policy_covers_the_sub_agent_calls() -> None:
    gates = GateBroker()
    seen = Seen(gates, (False, "bob", "not today"))
    child = cleaner(CHILD_REPLIES)  # asks for no approval of its own
    lead = lead_of(child, LEAD_REPLIES, approve=["delete_file"])
    result = await lead.run("tidy", on_event=seen, gates=gates, run_id="run_c")
    assert DELETED == [] and result.answer == "cleaned"
    child_id = seen.child_of("run_c")
    [asked] = seen.of(ConfirmationRequiredEvent)
    assert (asked.run_id, asked.step) == (child_id, "delete_file")
    [refused] = seen.of(ToolCallEvent, child_id) or [None]
    assert refused is None  # not run: the refusal is the child's observation
    assert "bob denied it. Reason given: not today" in child.model.requests[1].messages[-1].content  # type: ignore[attr-defined]


async def test_lead_approval_by_effect_covers_the_sub_agent_calls() -> None:
    gates = GateBroker()
    seen = Seen(gates, (True, "carol"))
    lead = lead_of(cleaner(CHILD_REPLIES), LEAD_REPLIES, approve=["destructive"])
    await lead.run("tidy", on_event=seen, gates=gates, run_id="run_d")
    asked = [(e.run_id, e.step) for e in seen.of(ConfirmationRequiredEvent)]
    # the lead's own call of the sub-agent (its effect is its tools' strongest), then the
    # sub-agent's call of the destructive tool
    assert asked == [("run_d", "clean"), (seen.child_of("run_d"), "delete_file")]
    assert DELETED == ["a.txt"]


def test_cli_approve_names_a_tool_of_the_sub_agent(
    tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    """`--approve TOOL` on the lead covers TOOL inside its sub-agents: the researcher's
    encyclopedia call waits for a decision (`--yes` gives it); the lead's call does not."""
    root = Path(__file__).resolve().parents[2]
    done = run_cli(
        "run", "How tall is Mont Blanc?",
        "--model", f"scripted:{root / 'examples' / 'subagents_lead.json'}",
        "--tools", f"{root / 'examples' / 'subagents.py'}:research",
        "--approve", "encyclopedia", "--yes", "--store", str(tmp_path / "runs.db"),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.code == 0, done.err
    store = SqliteRunStore(tmp_path / "runs.db")
    try:
        [child] = [r for r in store.list_runs() if r.parent_run_id]
        decided = [e for e in store.events(child.run_id) if isinstance(e, GateDecisionEvent)]
        lead_gates = [
            e for e in store.events(child.parent_run_id or "") if isinstance(e, GateDecisionEvent)
        ]
    finally:
        store.close()
    assert [(e.step, e.approved, e.decided_by) for e in decided] == [
        ("encyclopedia", True, "--yes")
    ]
    assert lead_gates == []


async def test_a_sub_agents_call_waits_as_long_as_the_leads() -> None:
    gates = GateBroker()
    seen = Seen(gates, (True, "alice"))
    child = cleaner(CHILD_REPLIES, approve=["delete_file"])  # its own option: 300 s
    lead = lead_of(child, LEAD_REPLIES, options=AgentOptions(approval_timeout_s=7.0))
    result = await lead.run("tidy", on_event=seen, gates=gates, run_id="run_t")
    assert result.answer == "cleaned"
    [asked] = seen.of(ConfirmationRequiredEvent)
    assert asked.run_id == seen.child_of("run_t")
    assert asked.timeout_s == 7.0
