"""Conversation: follow-up turns with one agent, each a run of its own in the store.

    runtime = Runtime(SqliteRunStore("runs.db"))
    chat = runtime.conversation(agent)
    first = await chat.send("What is 12 USD in GBP?")
    second = await chat.send("and in EUR?")       # the model sees the first turn too

Each turn is started with `after=` the turn before (`Runtime.start_agent`, or
`Runtime.start` for a spec), so it is listed, followed, resumed and replayed like any run;
its history is built from the store. Another process (or this one after a restart) takes
the conversation up with `runtime.conversation(agent, after=LAST_RUN_ID)`.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from loopwright.agent import AgentExecutor, ExecutionResult
from loopwright.effects._log import EventSink
from loopwright.runtime._handles import RunHandle
from loopwright.runtime._spec import RunSpec
from loopwright.runtime._turns import run_id_of
from loopwright.store import RunRecord, RunStore, conversation_turns


class Starter(Protocol):
    """What a conversation starts its turns with (the Runtime)."""

    store: RunStore

    def start(
        self, spec: RunSpec, *, after: str | None = None, on_event: EventSink | None = None
    ) -> RunHandle: ...

    def start_agent(
        self,
        agent: AgentExecutor,
        request: str,
        *,
        tenant: str = "default",
        after: str | None = None,
        on_event: EventSink | None = None,
    ) -> RunHandle: ...


class Conversation:
    """Turns with one agent (built in code, or from a RunSpec) through a Runtime."""

    def __init__(
        self,
        runtime: Starter,
        agent: AgentExecutor | RunSpec,
        *,
        after: str | ExecutionResult | None = None,
        tenant: str | None = None,
    ) -> None:
        """`after`: the run of the turn to go on from (None: a new conversation);
        `tenant`: whose runs the turns are (a spec's own by default, else `default`)."""
        self.runtime = runtime
        self.agent = agent
        if tenant is None:
            tenant = agent.tenant if isinstance(agent, RunSpec) else "default"
        self.tenant = tenant
        self.last_run_id: str | None = run_id_of(after) if after is not None else None
        """The run of the latest turn; the next `send` follows it."""

    async def send(self, request: str, *, on_event: EventSink | None = None) -> ExecutionResult:
        """Run one turn to its end: `request` after every turn before it. `on_event` sees
        the turn's events as they happen. The conversation goes on from this turn, whatever
        its status (a stopped turn's work is in the history too)."""
        after = self.last_run_id
        if isinstance(self.agent, RunSpec):
            spec = dataclasses.replace(self.agent, request=request, tenant=self.tenant)
            handle = self.runtime.start(spec, after=after, on_event=on_event)
        else:
            handle = self.runtime.start_agent(
                self.agent, request, tenant=self.tenant, after=after, on_event=on_event
            )
        result: ExecutionResult = await handle.wait()
        self.last_run_id = result.run_id
        return result

    def turns(self) -> list[RunRecord]:
        """The conversation's runs so far, oldest first (`conversation_turns`)."""
        if self.last_run_id is None:
            return []
        return conversation_turns(self.runtime.store, self.last_run_id, tenant=self.tenant)
