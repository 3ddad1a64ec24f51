"""The RunStore protocol: one durable log of events per run, namespaced by tenant."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from loopwright.errors import RunNotFound
from loopwright.events import Event

StoredStatus = Literal[
    "queued",
    "running",
    "completed",
    "stopped",
    "failed",
    "cancelled",
    "interrupted",
    "rolled_back",
    "waiting",
]
"""`queued`: an engine accepted the run (`register_run`) and no process has started it yet.
`waiting`: the run stopped at a tool call nobody had decided (`on_pending="wait"`); a
decision is left for it in the store, and it goes on when resumed."""

FINISHED: tuple[StoredStatus, ...] = ("completed", "stopped", "failed", "cancelled", "rolled_back")
"""A run in one of these has ended: it is not resumed, and gets no more events."""

ENGINES = ("embedded", "temporal")
"""Where a run executes: this process's Runtime, or Temporal workers (loopwright.engines)."""


@dataclass(frozen=True)
class RunRecord:
    """One row of the run list: derived from the run's events as they are appended."""

    run_id: str
    tenant: str
    kind: Literal["agent", "task"]
    status: StoredStatus
    request: str
    model: str
    created_at: float
    updated_at: float
    last_seq: int
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    answer: str | None = None
    reason: str | None = None
    parent_run_id: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    tools: tuple[str, ...] = ()
    engine: str = "embedded"
    """The engine that executes the run (one of ENGINES): who starts, resumes, cancels it
    and takes its gates' decisions."""
    after_run_id: str | None = None
    """A follow-up in a conversation: the run of the turn before it."""

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["tools"] = list(self.tools)
        return data


@dataclass(frozen=True)
class Lease:
    """Who is executing a run, and until when their claim holds unless renewed."""

    owner: str
    expires_at: float


@dataclass(frozen=True)
class GateDecision:
    """A decision on a task run's gate, left in the store for the process running it."""

    run_id: str
    request_id: str
    approved: bool
    decided_by: str
    decided_at: float


class RunStore(Protocol):
    """Append-only event log per run. Appends happen before any subscriber sees the event.

    A process executing a run holds its lease and renews it (runtime's LeaseKeeper); a
    persistent store reports a `running` run whose lease has lapsed as `interrupted`.
    """

    def append(self, event: Event) -> None:
        """Store one event. `run_started` creates the run; `run_finished` closes it."""
        ...

    def append_many(self, events: Sequence[Event], lines: Sequence[str] | None = None) -> None:
        """Store events in order, in one transaction where the store has them. `lines`, if
        given, are the events' `encode_event` lines (the writer made them already)."""
        ...

    def register_run(self, record: RunRecord) -> None:
        """Make the row of a run an engine accepted before its first event (status `queued`):
        listed at once, and its `engine` recorded. The run's `run_started` then fills the
        row in and keeps its engine and creation time. StoreError if the run exists."""
        ...

    def events(self, run_id: str, *, after: int = 0) -> list[Event]:
        """Events of a run with `seq > after`, in order."""
        ...

    def get_run(self, run_id: str, *, tenant: str | None = None) -> RunRecord | None:
        """The run, or None if it does not exist or belongs to another tenant."""
        ...

    def find_run(self, run_id: str, *, tenant: str | None = None) -> RunRecord:
        """The run, or RunNotFound naming the store (`RunLookup`)."""
        ...

    def list_runs(
        self, *, tenant: str | None = None, status: str | None = None, limit: int = 100
    ) -> list[RunRecord]: ...

    def follow_ups(self, run_id: str, *, tenant: str | None = None) -> list[RunRecord]:
        """The runs that follow `run_id` in a conversation (their `after_run_id` is it), of
        `tenant` when given, oldest first: the next turn, or several when the conversation
        was taken up again from that turn more than once."""
        ...

    def run_ids_starting(
        self, prefix: str, *, tenant: str | None = None, limit: int = 10
    ) -> list[str]:
        """The ids of the runs whose id starts with `prefix`, in id order, at most `limit`
        (a command line takes a unique prefix of a run id)."""
        ...

    def set_status(self, run_id: str, status: StoredStatus) -> None: ...

    def acquire_lease(self, run_id: str, owner: str, ttl_s: float) -> bool:
        """Take (or renew) the right to run `run_id`; False if another live owner holds it."""
        ...

    def release_lease(self, run_id: str, owner: str) -> None: ...

    def lease(self, run_id: str) -> Lease | None:
        """The run's current lease holder (expired or not), if any."""
        ...

    async def wait_for_events(self, run_id: str, *, after: int, timeout: float) -> bool:
        """Wait until the run has a stored event with seq > after (True), or until `timeout`
        seconds pass (False), whichever process appends it. The live tail's primitive
        (`Runtime.follow` waits on it): SQLite polls, Postgres is woken by NOTIFY."""
        ...

    def post_gate_decision(
        self,
        run_id: str,
        request_id: str,
        approved: bool,
        decided_by: str,
        *,
        decided_at: float | None = None,
    ) -> bool:
        """Leave a decision on a gate for the process executing the run (which polls
        `gate_decision`). The first decision wins: False if the gate already has one.
        The store does not check that the run or the gate exists; callers do.
        `decided_at` defaults to now (a copy of a store keeps the original time)."""
        ...

    def gate_decision(self, run_id: str, request_id: str) -> GateDecision | None:
        """The decision posted for the gate, if any."""
        ...

    def close(self) -> None: ...


class RunLookup:
    """`find_run` for every store: a base of each store class, which gives `get_run` and
    says where it is (`path`: a file, a URL without its password; "" in memory)."""

    path: str = ""

    def get_run(self, run_id: str, *, tenant: str | None = None) -> RunRecord | None:
        raise NotImplementedError

    def find_run(self, run_id: str, *, tenant: str | None = None) -> RunRecord:
        """The stored run (of `tenant`, when given), or RunNotFound naming this store."""
        record = self.get_run(run_id, tenant=tenant)
        if record is None:
            raise RunNotFound(run_id, self.path)
        return record


def find_run(store: RunStore, run_id: str, *, tenant: str | None = None) -> RunRecord:
    """The stored run (of `tenant`, when given), or RunNotFound: `store.find_run`."""
    return store.find_run(run_id, tenant=tenant)
