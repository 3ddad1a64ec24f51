"""AgentParts: what an agent is made of (model, tools, options, prompt, parsers, policies,
approval policy, deps type) and how one run of it is made: its RunContext, its RunSetup,
its Effects, and the one async core that runs it (`run_with`). `AgentExecutor` (the
public class, agent/_executor.py) builds the parts and offers the ways to run."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, Literal

from loopwright import telemetry
from loopwright.agent._approval import ApprovalPolicy
from loopwright.agent._deps import check_deps
from loopwright.agent._lineage import NO_LINEAGE, Lineage, recording_of
from loopwright.agent._loop import run_agent
from loopwright.agent._options import AgentOptions, recorded_revision, recorded_workspace_section
from loopwright.agent._output import OutputSpec
from loopwright.agent._pending import OnPending
from loopwright.agent._result import ExecutionResult, OutputT
from loopwright.agent._setup import RunSetup, Verifier
from loopwright.agent._state import having
from loopwright.clock import Clock
from loopwright.effects import Effects, EventLog, LiveEffects, Recording, ReplayEffects
from loopwright.events import Event, ModelResponseEvent, RunStartedEvent
from loopwright.guards import (
    Budget,
    CostLedger,
    MaxIterations,
    NoProgress,
    Repetition,
    StopPolicy,
    UnknownTools,
    WallClock,
)
from loopwright.guards._budget import DEFAULT_PRICES
from loopwright.messages import ModelResponse
from loopwright.models import Model
from loopwright.models._base import ChecksUse, ResumesScript
from loopwright.parsing import DEFAULT_PARSERS, ReplyParser, parse_reply
from loopwright.parsing._result import ParseOutcome
from loopwright.prompts import PromptBuilder, PromptParts
from loopwright.prompts._revisions import REVISIONS, Revision
from loopwright.run_context import (
    DepsT,
    EventSink,
    EventSource,
    Gatekeeper,
    Leases,
    Recorder,
    RunContext,
    ThreadPool,
)
from loopwright.safety.scrub import Scrubber
from loopwright.tools import ToolContext, ToolExecutor, ToolRegistry, workspace_context


class AgentParts(Generic[DepsT, OutputT]):
    """An agent's parts, and how a run of it is made (AgentExecutor sets them)."""

    model: Model
    output: OutputSpec | None
    """The type the final answer must have (`result.output`), if any."""
    options: AgentOptions
    tools: ToolRegistry
    approval: ApprovalPolicy | None
    """Which tool calls wait for a person's decision (see agent/_approval.py)."""
    on_pending: OnPending
    """At a call nobody has decided yet: "ask" the run's gatekeeper and wait (none:
    refused), or "wait": end the run `waiting` (see agent/_pending.py)."""
    deps_type: Any
    """The type of the deps each run is given (None: any, usually none)."""
    prompt_builder: PromptBuilder
    prompt_parts: PromptParts
    system_prompt_override: str | None
    parsers: tuple[ReplyParser, ...]
    scrubber: Scrubber
    workspace: Path
    extra_policies: tuple[StopPolicy, ...]
    prices: dict[str, tuple[float, float]] | None
    clock: Clock
    verifier: Verifier | None
    readable_roots: list[Path]

    def check_deps(self, deps: Any) -> None:
        """A TypeError naming the expected type unless `deps` are of this agent's
        `deps_type` (an agent without one takes any deps); every way to run checks first."""
        check_deps(self.deps_type, deps)

    @property
    def tool_mode(self) -> str:
        return self.options.tool_mode or self.model.preferred_tool_mode

    def system_prompt(self, request: str | None = None) -> str:
        """The exact system prompt the model gets (the same at every iteration).

        Given the request, it carries the WORKSPACE section (root, git repository and
        branch, the files the request names) when the agent has workspace tools.
        """
        return self._prompt(self.workspace_section(request) if request is not None else "")

    def workspace_section(self, request: str, workspace: Path | None = None) -> str:
        """Seed 003's workspace context (of `workspace`, else the agent's), for agents with
        tools that take a ToolContext."""
        if self.prompt_parts.workspace_section or not any(t.context_param for t in self.tools):
            return ""
        return workspace_context(workspace or self.workspace, request)

    def _prompt(self, workspace_section: str, options: AgentOptions | None = None) -> str:
        prompt = self._base_prompt(workspace_section, options or self.options)
        if self.output is None:
            return prompt
        return f"{prompt}\n\n{self.output.prompt_section(has_tools=len(self.tools) > 0)}"

    def _base_prompt(self, workspace_section: str, options: AgentOptions) -> str:
        if self.system_prompt_override is not None:
            return self.system_prompt_override
        mode: Literal["native", "prompted"] = "native" if self.tool_mode == "native" else "prompted"
        parts = dataclasses.replace(
            self.prompt_parts,
            tools=tuple(self.tools.specs()),
            tool_mode=mode,
            workspace_section=workspace_section or self.prompt_parts.workspace_section,
            context_window=self.prompt_parts.context_window or options.context_window,
            revision=options.revision,
            calls_per_reply=options.max_calls_per_reply or 1,
        )
        return self.prompt_builder.build(parts)

    def parse(self, response: ModelResponse) -> ParseOutcome:
        """How this agent reads a model reply (its parser chain)."""
        return parse_reply(response, self.parsers)

    @property
    def reads_first_action(self) -> bool:
        """Replies are read by the default parser chain, which takes their first action:
        the model may stop generating once that action is complete. A chain or a `parse`
        of one's own may read more of a reply, so its replies are generated whole."""
        return self.parsers == DEFAULT_PARSERS and type(self).parse is AgentParts.parse

    def _policies(
        self, opts: AgentOptions, revision: Revision, ledger: CostLedger
    ) -> list[StopPolicy]:
        policies: list[StopPolicy] = [MaxIterations()]
        if opts.max_tokens_total is not None or opts.max_cost is not None:  # else a no-op
            policies.append(
                Budget(ledger, max_tokens_total=opts.max_tokens_total, max_cost=opts.max_cost)
            )
        policies += [
            Repetition(opts.repetition_threshold, cycles=revision.repetition_cycles),
            NoProgress(opts.no_progress_limit, opts.progress_signal),
        ]
        if revision.stops_unknown_tools:
            policies.append(UnknownTools(opts.repetition_threshold))
        if opts.timeout_s:
            policies.append(WallClock(opts.timeout_s))
        return [*policies, *self.extra_policies]

    def run_context(
        self,
        run_id: str,
        *,
        tenant: str = "default",
        parent_run_id: str | None = None,
        parent_call_id: str | None = None,
        gates: Gatekeeper | None = None,
        sink: EventSink | None = None,
        recorder: Recorder | None = None,
        recorded: Sequence[Event] = (),
        store: EventSource | None = None,
        leases: Leases | None = None,
        tool_threads: ThreadPool | None = None,
        deps: Any = None,
    ) -> RunContext:
        """The context of a run of this agent: its workspace, scrubber, approval policy, a
        new ledger and its budget, with what the caller gives (who decides its gates, where
        its events go, what an earlier process of it recorded, the store, the leases,
        where its sync tools run and its deps)."""
        prices = {**DEFAULT_PRICES, **self.prices} if self.prices else DEFAULT_PRICES
        return RunContext(
            run_id=run_id,
            workspace=self.workspace,
            tenant=tenant,
            parent_run_id=parent_run_id,
            parent_call_id=parent_call_id,
            readable_roots=tuple(self.readable_roots),
            scrubber=self.scrubber,
            gates=gates,
            approval=self.approval,
            approval_timeout_s=self.options.approval_timeout_s,
            ledger=CostLedger(prices=prices),  # read only: the default table is shared
            max_tokens_total=self.options.max_tokens_total,
            max_cost=self.options.max_cost,
            sink=sink,
            recorder=recorder,
            recorded=tuple(recorded),
            store=store,
            leases=leases,
            tool_threads=tool_threads,
            deps=deps,
        )

    def setup(
        self,
        request: str,
        context: RunContext,
        *,
        spec: dict[str, Any] | None = None,
        workspace_section: str | None = None,
        lineage: Lineage = NO_LINEAGE,
        goes_on: bool = True,
    ) -> RunSetup:
        """Everything one run of `request` needs, resolved once (the workspace section of
        the prompt: `_run_section`). A scripted model goes on after the replies the run's
        log served, unless the run does not go on past its log (`goes_on` False: a past
        turn made again, a replay)."""
        if goes_on and context.recorded and issubclass(type(self.model), ResumesScript):
            self.model.resume_after(own_replies(context.own_recorded))  # type: ignore[attr-defined]
        section = self._run_section(request, context, workspace_section, lineage)
        options = self._run_options(section, context)
        revision = REVISIONS[options.revision]
        tool_executor = ToolExecutor(
            self.tools,
            context=ToolContext.of_run(context),
            scrubber=context.scrubber,
            timeout=self.options.tool_timeout_s,
            failure_text=revision.failure_text,
            unknown_tool_text=revision.unknown_tool_text,
        )
        policies = self._policies(options, revision, context.ledger)
        mode: Literal["native", "prompted"] = "native" if self.tool_mode == "native" else "prompted"
        return RunSetup(
            context=context,
            request=request,
            model=self.model,
            tools=self.tools,
            tool_mode=mode,
            options=options,
            revision=revision,
            system_prompt=self._prompt(section, options),
            parse=self.parse,
            before_model_call=having(policies, "before_model_call"),
            after_tool_calls=having(policies, "after_tool_calls"),
            tool_executor=tool_executor,
            verifier=self.verifier,
            spec=spec,
            output=self.output,
            # without tools, a typed answer is looked for after any invented action
            stop_at_action=self.reads_first_action and (self.output is None or len(self.tools) > 0),
            lineage=lineage,
        )

    def _run_section(
        self, request: str, context: RunContext, given: str | None, lineage: Lineage
    ) -> str:
        """The workspace section of a run's prompt: `given`, else the one an earlier
        process of the run recorded (so a resumed run gets the same prompt), else its
        conversation's, else the options', else made now."""
        if given is not None:
            return given
        recorded = recorded_workspace_section(context.own_recorded)
        if recorded is not None:
            return recorded
        if lineage.workspace_section is not None:
            return lineage.workspace_section
        if self.options.workspace_context is not None:
            return self.options.workspace_context
        return self.workspace_section(request, context.workspace)

    def _run_options(self, section: str, context: RunContext) -> AgentOptions:
        """The agent's options for one run: with its workspace section (recorded in
        run_started, so a resumed run gets the same prompt) and a sub-agent's budget (its
        lead's remainder: less) and the revision an earlier process of the run recorded (a
        resumed run goes on as it began, whatever the agent's default is now)."""
        changes: dict[str, Any] = {}
        revision = recorded_revision(context.own_recorded)
        if revision is not None and revision != self.options.revision:
            changes["revision"] = revision
        if section:
            changes["workspace_context"] = section
        budget = (context.max_tokens_total, context.max_cost)
        if budget != (self.options.max_tokens_total, self.options.max_cost):
            changes.update(max_tokens_total=budget[0], max_cost=budget[1])
        return dataclasses.replace(self.options, **changes) if changes else self.options

    def effects(
        self,
        context: RunContext,
        *,
        listened: Callable[[], bool] | None = None,
        served: Recording | None = None,
    ) -> Effects:
        """In-process effects for the run of `context`: live, or served from its recorded
        events first (`listened`: whether someone follows the run now, see LiveEffects)."""
        recorded = context.own_recorded
        log = EventLog(
            context.run_id,
            clock=self.clock,
            scrubber=context.scrubber,
            sink=context.sink,
            recorder=context.recorder,
            recorded=recorded,
        )
        live = LiveEffects(log, clock=self.clock, gates=context.gates, listened=listened)
        recording = recording_of(recorded, served)
        return live if recording is None else ReplayEffects(recording, live)

    async def run_with(self, fx: Effects, setup: RunSetup) -> ExecutionResult[OutputT]:
        """The one async core: run `setup` through the effects `fx`."""
        tracing = telemetry.active()
        if tracing is None:
            result = await run_agent(setup, fx)
        else:  # OpenTelemetry on: a span for the run and each effect (docs/telemetry.md)
            from loopwright.agent._traced import traced_agent_run

            result = await traced_agent_run(setup, fx, tracing)
        if issubclass(type(self.model), ChecksUse):  # (issubclass: ABCs remember the answer)
            self.model.check_used(completed=result.success)  # type: ignore[attr-defined]
        return result


def own_replies(recorded: Sequence[Event]) -> int:
    """The model replies a run's log served of its own (a fork's first steps, served from
    the run it forks, are not its script's)."""
    taken = 0
    for event in recorded:
        if isinstance(event, RunStartedEvent) and event.fork_of is not None:
            taken = int(event.fork_of.get("step", 0))
    return sum(isinstance(e, ModelResponseEvent) and e.iteration_number > taken for e in recorded)
