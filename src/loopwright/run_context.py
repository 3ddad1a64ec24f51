"""RunContext: what a run's code needs from its run, built once per run, passed explicitly.

The agent builds one for each run (`AgentExecutor.run_context`, or from the lead's for a
sub-agent) and hands it to everything that needs it: the run's effects are made from it,
the tool executor and every tool get it through their `ToolContext`, and a sub-agent's run
gets one derived from its lead's (same workspace, gatekeeper, scrubber, sink, store). No
run state is found any other way: no context variable, no attribute lookups on effects.

Also here, because tools and the effects both need them and tools sit below the effects:
the gatekeeper's protocol and the values it trades (`GateRequest`, `GateVerdict`), and the
two destinations of a run's events (`EventSink`, `Recorder`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from loopwright.events import Event
from loopwright.guards import CostLedger
from loopwright.messages import ToolCall
from loopwright.safety.scrub import Scrubber

if TYPE_CHECKING:  # a default for type checkers (PEP 696); Python 3.11's TypeVar has none
    from typing_extensions import TypeVar as DefaultingTypeVar

    DepsT = DefaultingTypeVar("DepsT", default=None)
else:
    DepsT = TypeVar("DepsT")
"""The type of a run's deps (`AgentExecutor[DepsT, ...]`, `ToolContext[DepsT]`); None when
the agent declares none."""

EventSink = Callable[[Event], Awaitable[None] | None]
"""Gets every event of a run as it happens (in this process): a coroutine function, or a
plain function such as `events.append` (`on_event=`)."""


class Recorder(Protocol):
    """Makes a run's events durable (the run store's writer)."""

    def write(self, event: Event) -> None:
        """Queue one event; returns at once."""
        ...

    async def flush(self) -> None:
        """Return once every event written so far is durable."""
        ...


@dataclass(frozen=True)
class GateRequest:
    """A run asks a person (or a policy) before it goes on."""

    request_id: str
    step: str
    message: str
    timeout_s: float


MAX_REASON_CHARS = 1000
"""The longest reason a gate decision carries (it is stored, and a refusal's observation
quotes it to the model); the API and `approve --reason` refuse a longer one."""


@dataclass(frozen=True)
class GateVerdict:
    """What was decided on a gate: `approved`, `rejected` or `timed_out`. A reason longer
    than MAX_REASON_CHARS (from a path that did not refuse it) is cut, and says so."""

    outcome: str
    decided_by: str
    reason: str = ""

    def __post_init__(self) -> None:
        if len(self.reason) > MAX_REASON_CHARS:
            cut = f"{self.reason[:MAX_REASON_CHARS]}… [{len(self.reason):,} characters, cut]"
            object.__setattr__(self, "reason", cut)

    @property
    def approved(self) -> bool:
        return self.outcome == "approved"


class Gatekeeper(Protocol):
    """Where gate decisions come from: a terminal prompt, the HTTP API, the store."""

    async def decide(self, run_id: str, request: GateRequest) -> GateVerdict:
        """Wait for the decision on `request` (the caller bounds the wait)."""
        ...

    def resolve(self, request_id: str, approved: bool, decided_by: str, reason: str = "") -> bool:
        """A decision made in this process; False if no gate `request_id` waits here."""
        ...


class ApprovalRule(Protocol):
    """Which tool calls wait for a decision (agent/_approval.py's `ApprovalPolicy`)."""

    def needs(self, call: ToolCall, effect: str) -> bool:
        """Does `call`, of a tool declaring `effect` ("" for an unknown tool), wait?"""
        ...


class Leases(Protocol):
    """Who runs which run (the Runtime's lease keeper): a sub-agent's run holds its own
    lease while it runs, so other processes see it running and follow it live."""

    def hold(self, run_id: str) -> None: ...

    def release(self, run_id: str) -> None: ...


T = TypeVar("T")


class ThreadPool(Protocol):
    """Where a run's blocking (sync) tools run (tools/_threads.py's `ToolThreads`)."""

    async def run(self, function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T: ...


class EventSource(Protocol):
    """Where the recorded events of a run are read from (the run store)."""

    def events(self, run_id: str) -> Sequence[Event]: ...


@dataclass(frozen=True, slots=True)
class RunContext:
    """What a run's code needs from its run. Frozen; the ledger is the one part that
    changes (it counts the run's usage)."""

    run_id: str
    workspace: Path
    """The folder the run's file tools work in (and a sub-agent's)."""
    tenant: str = "default"
    parent_run_id: str | None = None
    parent_call_id: str | None = None
    """A sub-agent's run: the lead's tool call that started it."""
    depth: int = 0
    """0 for a run of its own; a sub-agent's is its lead's + 1."""
    readable_roots: tuple[Path, ...] = ()
    """Folders outside the workspace that read-only tools may read (a skill's folder)."""
    scrubber: Scrubber | None = None
    """Scrubs every event of the run (and of its sub-agents) and every tool result."""
    gates: Gatekeeper | None = None
    """Decides the run's gates and approvals (its sub-agents' too); None: nobody can."""
    approval: ApprovalRule | None = None
    """Which tool calls wait for a decision: the agent's own policy, and for a sub-agent
    also its lead's."""
    approval_timeout_s: float | None = None
    """How long a tool call waits for its decision (the agent's option); a sub-agent's
    calls wait as long as its lead's (the same person decides). None: the agent's own."""
    ledger: CostLedger = field(default_factory=CostLedger)
    """The run's token and cost usage (a sub-agent's is added to its lead's)."""
    max_tokens_total: int | None = None
    max_cost: float | None = None
    """The run's budget (a sub-agent gets at most what its lead has left)."""
    sink: EventSink | None = None
    recorder: Recorder | None = None
    recorded: tuple[Event, ...] = ()
    """The events an earlier process of the run recorded: its own and its sub-agents'."""
    store: EventSource | None = None
    """Where a sub-agent's recorded events are read when `recorded` does not hold them."""
    leases: Leases | None = None
    tool_threads: ThreadPool | None = None
    """Where the run's sync tools run: its tenant's pool (the Runtime's chooser); None: the
    process's default pool. A sub-agent uses its lead's."""
    deps: Any = None
    """The run's dependencies (`agent.run(request, deps=...)`), which its tools get as
    `ToolContext.deps`; a sub-agent gets its lead's. Never recorded: a resumed run gets
    them again from its caller."""

    @property
    def own_recorded(self) -> list[Event]:
        """The run's own recorded events (without its sub-agents')."""
        return [e for e in self.recorded if e.run_id == self.run_id]

    def recorded_for(self, run_id: str) -> list[Event]:
        """Another run's recorded events (a sub-agent's): from `recorded`, else the store."""
        own = [e for e in self.recorded if e.run_id == run_id]
        if not own and self.store is not None:
            own = list(self.store.events(run_id))
        return own

    def tokens_left(self) -> int | None:
        """What is left of the token budget (at least 1), None without one."""
        if self.max_tokens_total is None:
            return None
        used = self.ledger.total_usage
        return max(1, self.max_tokens_total - used.input_tokens - used.output_tokens)

    def cost_left(self) -> float | None:
        """What is left of the cost budget, None without one."""
        if self.max_cost is None:
            return None
        return max(0.0, self.max_cost - self.ledger.total_cost)
