"""AgentExecutor: the public face of the ReAct loop. `run`, `stream` and `run_sync` share
one async core (`run_with`, which runs agent/_loop.py's `run_agent` over an Effects)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from loopwright.agent._agent_parts import AgentParts
from loopwright.agent._approval import ApproveSpec, approval_policy
from loopwright.agent._deps import check_deps_type, check_tool_deps
from loopwright.agent._lineage import NO_LINEAGE, Lineage
from loopwright.agent._options import AgentOptions
from loopwright.agent._output import as_output_spec
from loopwright.agent._pending import (
    OnPending,
    WaitingGates,
    check_on_pending,
    decisions_for,
    gatekeeper,
    kept_events,
    run_started,
)
from loopwright.agent._process import new_run_id, working_directory
from loopwright.agent._result import ExecutionResult, OutputT
from loopwright.agent._subagent import DEFAULT_MAX_DEPTH, as_tool, nested_tool_names
from loopwright.agent._turns import lineage_of
from loopwright.agent._verify import VerifierSpec, as_verifier
from loopwright.clock import Clock, SystemClock
from loopwright.events import Event
from loopwright.guards import StopPolicy
from loopwright.models import Model
from loopwright.parsing import DEFAULT_PARSERS, ReplyParser
from loopwright.prompts import PromptBuilder, PromptParts
from loopwright.run_context import DepsT, EventSink, Gatekeeper
from loopwright.safety.scrub import Scrubber
from loopwright.tools import Tool, ToolRegistry

if TYPE_CHECKING:
    from typing import TypedDict, Unpack

    class AgentSettings(TypedDict, total=False):
        """The keyword arguments of `AgentExecutor` other than the typed ones."""

        options: AgentOptions | None
        prompt_builder: PromptBuilder | None
        prompt_parts: PromptParts | None
        system_prompt: str | None
        parsers: Sequence[ReplyParser]
        scrubber: Scrubber | None
        workspace: str | Path | None
        policies: Sequence[StopPolicy]
        prices: dict[str, tuple[float, float]] | None
        clock: Clock | None
        verifier: VerifierSpec | None
        readable_roots: Sequence[str | Path]
        approve: ApproveSpec
        on_pending: OnPending


def _listened_if(listened: bool) -> Callable[[], bool]:
    """`listened=` for a run whose sink keeps its events: token deltas are streamed only
    when the caller gave an `on_event` to send them to."""
    return lambda: listened


Tools = ToolRegistry | Iterable[Tool | Callable[..., Any]]
"""What `AgentExecutor(model, tools)` takes: a registry, or tools and typed functions."""


class AgentExecutor(AgentParts[DepsT, OutputT]):
    """Runs requests through the ReAct loop: reason, call a tool, observe, repeat.

    >>> agent = AgentExecutor(ScriptedModel(['{"final_answer": "hi"}']), tools=[echo])
    >>> agent.run_sync("say hi").answer
    'hi'

    Generic in the deps its runs are given (`deps_type=`) and the type of its answer
    (`output_type=`): `AgentExecutor(model, deps_type=Shop, output_type=Invoice)` is an
    `AgentExecutor[Shop, Invoice]`, whose `run(..., deps=)` takes a `Shop` and whose
    `result.output` is an `Invoice` (None until the run completes).
    """

    @overload
    def __init__(
        self: AgentExecutor[DepsT, None],
        model: Model,
        tools: Tools = (),
        *,
        output_type: None = None,
        deps_type: type[DepsT] | None = None,
        **settings: Unpack[AgentSettings],
    ) -> None: ...

    @overload
    def __init__(
        self: AgentExecutor[DepsT, OutputT],
        model: Model,
        tools: Tools = (),
        *,
        output_type: type[OutputT],
        deps_type: type[DepsT] | None = None,
        **settings: Unpack[AgentSettings],
    ) -> None: ...

    @overload
    def __init__(
        self: AgentExecutor[DepsT, Any],
        model: Model,
        tools: Tools = (),
        *,
        output_type: Any,
        deps_type: type[DepsT] | None = None,
        **settings: Unpack[AgentSettings],
    ) -> None: ...

    def __init__(
        self,
        model: Model,
        tools: Tools = (),
        *,
        options: AgentOptions | None = None,
        prompt_builder: PromptBuilder | None = None,
        prompt_parts: PromptParts | None = None,
        system_prompt: str | None = None,
        parsers: Sequence[ReplyParser] = DEFAULT_PARSERS,
        scrubber: Scrubber | None = None,
        workspace: str | Path | None = None,
        policies: Sequence[StopPolicy] = (),
        prices: dict[str, tuple[float, float]] | None = None,
        clock: Clock | None = None,
        verifier: VerifierSpec | None = None,
        readable_roots: Sequence[str | Path] = (),
        output_type: Any = None,
        approve: ApproveSpec = None,
        deps_type: Any = None,
        on_pending: OnPending = "ask",
    ) -> None:
        self.model = model
        self.output = as_output_spec(output_type)
        self.options = options or AgentOptions()
        allowed = self.options.allowed_tools
        if isinstance(tools, ToolRegistry) or allowed is not None:
            registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
            self.tools = registry.filtered(allowed)  # a copy: the caller's may change later
        else:
            self.tools = ToolRegistry(tools)
        self.options = self.options.for_tools(self.tools, model)  # defaults, recorded
        self.approval = approval_policy(approve, self.tools, nested_tool_names(self.tools))
        self.on_pending = check_on_pending(on_pending)
        self.deps_type = check_deps_type(deps_type)
        check_tool_deps(self.tools, self.deps_type)
        self.prompt_builder = prompt_builder or PromptBuilder()
        self.prompt_parts = prompt_parts or PromptParts()
        self.system_prompt_override = system_prompt
        self.parsers = tuple(parsers)
        self.scrubber = scrubber or Scrubber.default()
        self.workspace = Path(workspace).resolve() if workspace else working_directory()
        self.extra_policies = tuple(policies)
        self.prices = prices
        self.clock = clock or SystemClock()
        self.verifier = as_verifier(verifier)
        self.readable_roots = [Path(root).resolve() for root in readable_roots]

    async def run(
        self,
        request: str,
        *,
        run_id: str | None = None,
        tenant: str = "default",
        parent_run_id: str | None = None,
        on_event: EventSink | None = None,
        recorded: Sequence[Event] = (),
        gates: Gatekeeper | None = None,
        deps: DepsT | None = None,
        after: ExecutionResult[Any] | None = None,
        fork_of: tuple[ExecutionResult[Any], int] | None = None,
    ) -> ExecutionResult[OutputT]:
        """Run to the end and return the result; `on_event` sees every event as it happens.

        `deps` are what the run's tools read as `ctx.deps` (of the agent's `deps_type`: a
        TypeError before anything runs otherwise); they are never recorded. `recorded`
        holds the events of an earlier process of the same run (resume): completed model
        and tool calls are taken from them instead of being repeated. `gates` decides the
        tool calls that need approval (`approve=`); without one, every such call is
        refused (nobody can approve it), or with `on_pending="wait"` the run ends
        `waiting` at it (`result.pending_approvals`; go on with `resume`).

        `after=result`: a follow-up in the same conversation; the model gets the earlier
        turn(s) first, as it saw them. `fork_of=(result, step)`: a new run whose first
        `step` steps are the old run's (its replies, tool results and approvals served,
        none made again), then live. Both take a result of this process; a run in a store
        is continued or forked through the Runtime (docs/conversations.md).
        """
        self.check_deps(deps)
        run_id = run_id or (recorded[0].run_id if recorded else new_run_id())
        lineage = lineage_of(run_id, after=after, fork_of=fork_of)
        return await self._run(
            request, lineage, run_id=run_id, tenant=tenant, parent_run_id=parent_run_id,
            on_event=on_event, recorded=recorded, gates=gates, deps=deps,
        )  # fmt: skip

    async def _run(
        self,
        request: str,
        lineage: Lineage,
        *,
        run_id: str,
        tenant: str,
        parent_run_id: str | None,
        on_event: EventSink | None,
        recorded: Sequence[Event],
        gates: Gatekeeper | None,
        deps: DepsT | None,
    ) -> ExecutionResult[OutputT]:
        """`run` once the run's lineage (what it takes from runs before it) is known."""
        gates = gatekeeper(self.on_pending, gates)
        kept: list[Event] | None = None
        listened = None
        if self.on_pending == "wait":  # a waiting result carries its events (resume)
            listened = _listened_if(on_event is not None)  # token deltas: for on_event only
            kept, on_event = kept_events(on_event)
        context = self.run_context(
            run_id,
            tenant=tenant,
            parent_run_id=parent_run_id,
            gates=gates,
            sink=on_event,
            recorded=recorded,  # its own events and its sub-agents'
            deps=deps,
        )
        fx = self.effects(context, listened=listened, served=lineage.served)
        result = await self.run_with(fx, self.setup(request, context, lineage=lineage))
        if kept is not None and result.status == "waiting":
            result = dataclasses.replace(result, events=(*recorded, *kept))
        return result

    async def resume(
        self,
        result: ExecutionResult[Any],
        *,
        approve: Iterable[str] = (),
        reject: Mapping[str, str] | None = None,
        decided_by: str = "user",
        deps: DepsT | None = None,
        on_event: EventSink | None = None,
    ) -> ExecutionResult[OutputT]:
        """Go on with a run that ended `waiting` (`on_pending="wait"`), in this process:
        `approve` the gates (`PendingApproval.gate_id`) whose calls may run, `reject` the
        others with a reason (the model gets it as the call's observation). The run's log
        is replayed (no model or tool call is made again) up to the gate, then it goes on
        live, to its end or to the next call that waits. `deps` are given again (they are
        never recorded). A UsageError, before anything runs, for a run that is not
        waiting, a gate it does not wait at, or one left undecided.
        """
        verdicts = decisions_for(result, approve, reject or {}, decided_by)
        self.check_deps(deps)
        started = run_started(result, result.events)
        memory = result._memory  # a follow-up or a fork: the turn before's history again
        lineage = NO_LINEAGE if memory is None else dataclasses.replace(memory.lineage, served=None)
        return await self._run(
            started.request,
            lineage,  # a fork's served steps are in its own log by now: it stopped live
            run_id=result.run_id,
            tenant=started.tenant,
            parent_run_id=started.parent_run_id,
            on_event=on_event,
            recorded=result.events,
            gates=WaitingGates(verdicts),
            deps=deps,
        )

    def resume_sync(
        self,
        result: ExecutionResult[Any],
        *,
        approve: Iterable[str] = (),
        reject: Mapping[str, str] | None = None,
        decided_by: str = "user",
        deps: DepsT | None = None,
        on_event: EventSink | None = None,
    ) -> ExecutionResult[OutputT]:
        """`resume` for code that is not async."""
        resumed = self.resume(
            result, approve=approve, reject=reject, decided_by=decided_by, deps=deps,
            on_event=on_event,
        )  # fmt: skip
        return asyncio.run(resumed)

    def as_tool(self, name: str, description: str, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Tool:
        """This agent as a tool of another: each call is a sub-agent run of its own, linked
        to the calling run and its tool call (see agent/_subagent.py)."""
        return as_tool(self, name, description, max_depth=max_depth)

    async def stream(
        self,
        request: str,
        *,
        run_id: str | None = None,
        tenant: str = "default",
        parent_run_id: str | None = None,
        recorded: Sequence[Event] = (),
        gates: Gatekeeper | None = None,
        deps: DepsT | None = None,
        after: ExecutionResult[Any] | None = None,
        fork_of: tuple[ExecutionResult[Any], int] | None = None,
    ) -> AsyncIterator[Event]:
        """Yield every event of a run as it happens (`run`'s other arguments)."""
        self.check_deps(deps)
        queue: asyncio.Queue[Event | None] = asyncio.Queue()

        async def push(event: Event) -> None:
            await queue.put(event)

        run = self.run(
            request,
            run_id=run_id,
            tenant=tenant,
            parent_run_id=parent_run_id,
            on_event=push,
            recorded=recorded,
            gates=gates,
            deps=deps,
            after=after,
            fork_of=fork_of,
        )
        task = asyncio.create_task(run)
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            task.result()
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    def run_sync(
        self,
        request: str,
        *,
        run_id: str | None = None,
        tenant: str = "default",
        parent_run_id: str | None = None,
        on_event: EventSink | None = None,
        recorded: Sequence[Event] = (),
        gates: Gatekeeper | None = None,
        deps: DepsT | None = None,
        after: ExecutionResult[Any] | None = None,
        fork_of: tuple[ExecutionResult[Any], int] | None = None,
    ) -> ExecutionResult[OutputT]:
        """`run` for code that is not async."""
        self.check_deps(deps)  # before the coroutine is made: nothing is left unawaited
        run = self.run(
            request,
            run_id=run_id,
            tenant=tenant,
            parent_run_id=parent_run_id,
            on_event=on_event,
            recorded=recorded,
            gates=gates,
            deps=deps,
            after=after,
            fork_of=fork_of,
        )
        return asyncio.run(run)
