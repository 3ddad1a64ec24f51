"""The activities of a Temporal agent run: every effect, and the event log's appends.

Each activity first appends the events the workflow has made since the last one (in one
transaction, skipping those a failed earlier attempt already stored), then does its work.
Inputs stay small: a model call gets the messages that are new since the previous call and
loads the others from the content store; a tool call gets its call.

Their inputs and outputs are the dataclasses of engines/temporal/_payloads.py; what a
worker builds once per run (its setup, its model) is kept by engines/temporal/_run_setups.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Callable, Sequence
from secrets import token_hex
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from loopwright.agent._lineage import lineage_payload
from loopwright.engines.temporal._activity_support import (
    HEARTBEAT_EVERY_S,
    LEASE_OWNER,
    LEASE_TTL_S,
    UNCERTAIN,
    RunLocks,
    WorkerSecrets,
    _as_application_errors,
    _heartbeating,
    _model_failure,
    retrying,
    store_call,
    uncertain_result,
)
from loopwright.engines.temporal._allows import WorkerAllows
from loopwright.engines.temporal._build import build_setup
from loopwright.engines.temporal._codec import PayloadCipher
from loopwright.engines.temporal._content import ContentStore, result_dict, result_from_dict
from loopwright.engines.temporal._mcp import MCPSessions, declarations
from loopwright.engines.temporal._payloads import (
    APPEND_EVENTS,
    LINEAGE,
    MODEL_CALL,
    PREPARE,
    RECORDING,
    TOOL_CALL,
    TOOL_OUTCOME,
    VERIFY,
    AppendInput,
    Events,
    LineageInput,
    ModelCallInput,
    ModelCallResult,
    OutcomeInput,
    PrepareInput,
    RecordingInput,
    RecordingPage,
    RunPlan,
    ToolCallInput,
    ToolOutcome,
    Verified,
    VerifyInput,
)
from loopwright.engines.temporal._refs import digests_in, expand, reference, request_digest
from loopwright.engines.temporal._report import WorkerReport
from loopwright.engines.temporal._run_setups import FULL_RESULT_CHARS, RunSetups
from loopwright.engines.temporal._subagents import WorkerParts
from loopwright.engines.temporal._versions import tool_code
from loopwright.engines.temporal._worker_agent import run_agent, run_model
from loopwright.errors import ModelError, StoreError
from loopwright.events import (
    Event,
    RunFinishedEvent,
    RunStartedEvent,
    event_from_dict,
    event_to_dict,
)
from loopwright.messages import Message, ModelRequest, ToolCall, ToolResult
from loopwright.runtime import RunSpec
from loopwright.runtime._lease import LeaseKeeper
from loopwright.runtime._turns import linked_workspace_section, stored_lineage
from loopwright.store import PersistentStore, open_store
from loopwright.store._memory import record_after
from loopwright.tasks import GateBroker
from loopwright.tools._executor import truncate_output

RECORDING_PAGE_BYTES = 512 * 1024
"""A page of a continued run's recorded events stays far below Temporal's 2 MB payloads."""


class RunActivities:
    """The activities, bound to one worker's run store and content store."""

    def __init__(
        self,
        store_url: str,
        *,
        cache_runs: int = 64,
        secrets: Sequence[str] = (),
        report: WorkerReport | None = None,
        allows: WorkerAllows | None = None,
        cipher: PayloadCipher | None = None,
    ) -> None:
        self.report = report or WorkerReport()
        """What this worker says about the runs it takes and ends (engines/temporal/_report)."""
        self.secrets = WorkerSecrets(secrets)
        self.allows = allows or WorkerAllows()
        """What the runs may ask of this worker (engines/temporal/_allows.py): by default,
        nothing that runs a program or loads code a spec names."""
        self.mcp = MCPSessions(max_runs=cache_runs)
        self.store: PersistentStore = open_store(store_url)
        self.content = ContentStore(store_url, cipher=cipher)
        self.parts = WorkerParts(self.store, GateBroker(self.store), LeaseKeeper(self.store))
        """What the runs' sub-agents get from this worker (engines/temporal/_subagents.py)."""
        self.setups = RunSetups(
            self.store, self.mcp, self.secrets, self.report, self.parts.complete,
            allows=self.allows, cache_runs=cache_runs,
        )  # fmt: skip
        self._appends = RunLocks()
        """One append at a time per run (a retried attempt and the one it replaced may
        both be here); the runs' appends never wait for each other."""

    def all(self) -> list[Callable[..., Any]]:
        return [self.prepare, self.append_events, self.model_call, self.tool_call,
                self.tool_outcome, self.verify, self.recording, self.lineage]  # fmt: skip

    def close(self) -> None:
        self.parts.leases.close()  # a sub-agent left unfinished lists as interrupted
        self.content.close()
        self.store.close()

    async def aclose(self) -> None:
        """Close every run's MCP sessions, then the stores."""
        await self.mcp.close_all()
        self.close()

    async def _append(self, run_id: str, events: Events) -> None:
        """Store the events not stored yet (an earlier attempt may have stored some)."""
        if not events:
            return

        started_at: list[float] = []

        async def attempt() -> list[Event]:
            record = await asyncio.to_thread(self.store.get_run, run_id)
            stored = record.last_seq if record is not None else 0
            fresh = [await self._resolved(run_id, e) for e in events if e["seq"] > stored]
            if record is None and fresh and isinstance(fresh[0], RunStartedEvent):
                await asyncio.to_thread(_register, self.store, fresh[0])
            if fresh:
                await asyncio.to_thread(self.store.append_many, fresh)
            started_at[:] = [record.created_at if record is not None else events[0]["ts"]]
            return fresh

        ending = any(e["type"] == "run_finished" for e in events)
        async with self._appends.held(run_id):
            if not ending:  # first: a run stored as running always has its lease (a reader
                # that saw it running without one would list it interrupted, a follower stop)
                await store_call(self.store.acquire_lease, run_id, LEASE_OWNER, LEASE_TTL_S)
            fresh = await retrying(attempt)
            finished = [e for e in fresh if isinstance(e, RunFinishedEvent)]
            if finished:
                self.report.ended(run_id, finished[0].status, finished[0].ts - started_at[0])
            if ending:
                await store_call(self.store.release_lease, run_id, LEASE_OWNER)
                await self.setups.forget(run_id)  # the run ended: its MCP servers are closed

    async def _resolved(self, run_id: str, data: dict[str, Any]) -> Event:
        """An event from the workflow, its referenced tool result loaded from the store."""
        ref = data.get("result_ref")
        data = {k: v for k, v in data.items() if k != "result_ref"}
        if ref is not None:
            found = await store_call(self.content.tool_call, f"{run_id}:{ref}")
            if found is None or found[1] is None:
                raise ApplicationError(f"run {run_id}: no stored result of call {ref}")
            data = {**data, "result": found[1].content}
        return event_from_dict(self.secrets.scrub(await self._expanded(run_id, data)))

    async def _expanded(self, run_id: str, value: Any) -> Any:
        """`value` with the long tool results it refers to put back (engines/temporal/_refs)."""
        digests = digests_in(value)
        if not digests:
            return value
        texts = await store_call(self.content.blobs, run_id, digests)
        if len(texts) < len(digests):
            raise ApplicationError(f"run {run_id}: tool results {digests - set(texts)} not stored")
        return expand(value, texts)

    async def _for_workflow(self, plan: RunPlan, result: ToolResult) -> dict[str, Any]:
        """A tool result as the workflow gets it: a long one as a reference to its text."""
        ref = reference(result.content, inline=_inline(plan))
        if ref is None:
            return result_dict(result)
        texts = {ref[1]: result.content}
        await store_call(self.content.save_blobs, plan.run_id, texts)
        return {**result_dict(result), "content": ref[0]}

    @activity.defn(name=PREPARE)
    async def prepare(self, data: PrepareInput) -> RunPlan:
        """Resolve the model and tools once; the plan every later step is built from."""
        async with _as_application_errors():
            spec = RunSpec.from_dict(data.spec)
            self.allows.check_run(data.run_id, spec)  # before anything of it is loaded
            model = run_model(spec)  # a run of the worker's agent: that agent's model
            opens = spec.mcp and spec.agent is None  # the worker's agent has its own tools
            tools = await self.setups.mcp_tools(data.run_id, spec.mcp) if opens else []
            agent = run_agent(spec, model, tools)
            section = data.workspace_section
            if section is None:  # a follow-up's or a fork's: the earlier run's prompt
                section = await store_call(linked_workspace_section, self.store, spec)
            return RunPlan(
                run_id=data.run_id,
                spec=data.spec,
                model_name=model.name,
                tool_mode=model.preferred_tool_mode,
                workspace_section=section or agent.workspace_section(spec.request),
                parent_run_id=data.parent_run_id,
                mcp_tools=declarations(tools) if opens else None,
                tool_code=tool_code(agent.tools),
                gate_key=token_hex(16),  # sealed in the history (_codec.py)
            )

    @activity.defn(name=LINEAGE)
    async def lineage(self, data: LineageInput) -> dict[str, Any]:
        """What a follow-up or a fork takes from earlier runs, read from the store: the
        earlier turns' transcript (each made again from its log by the run's agent, with a
        model that is never called), a fork's first steps."""
        plan = data.plan
        async with _as_application_errors():
            spec = RunSpec.from_dict(plan.spec)
            self.allows.check_run(plan.run_id, spec)  # before anything of it is loaded
            agent, _ = build_setup(plan)
            lineage = await stored_lineage(
                self.store, plan.run_id, agent, tenant=spec.tenant, after=spec.after,
                fork_of=spec.fork_of, spec=spec,
            )  # fmt: skip
        payload: dict[str, Any] = self.secrets.scrub(lineage_payload(lineage))
        return payload

    @activity.defn(name=APPEND_EVENTS)
    async def append_events(self, data: AppendInput) -> int:
        async with _as_application_errors():
            await self._append(data.run_id, data.events)
        return len(data.events)

    @activity.defn(name=MODEL_CALL)
    async def model_call(self, data: ModelCallInput) -> ModelCallResult:
        """One model call: (run_id, call) names its messages in the content store. Its
        reply, with the request digest when it differs."""
        plan = data.plan
        run_id, call = plan.run_id, data.call
        async with _as_application_errors():
            setup = await self.setups.setup(plan)  # first: a worker with other tool code refuses
            await self._append(run_id, data.events)
            new = [Message.from_dict(m) for m in data.new]
            base: list[Message] = []
            if data.base is not None:
                base = await store_call(self.content.load_request, run_id, data.base)
            messages = [*base[: data.keep], *new]
            await store_call(self.content.save_request, run_id, call, messages)
            stubbed = [m.to_dict() for m in messages]
            whole = [Message.from_dict(m) for m in await self._expanded(run_id, stubbed)]
            digest = None
            if whole != messages:  # the stored event gets the fingerprint of the whole texts
                digest = request_digest(whole, setup.native_tool_names)
            request = ModelRequest(
                messages=tuple(whole),
                tools=setup.native_tool_specs,
                temperature=data.temperature,
                max_output_tokens=data.max_output_tokens,
                output_schema=setup.output_schema,  # the worker's setup: the same spec
                stop_at_action=setup.stop_at_action,
                calls_in_a_row=setup.several_calls,
            )
            model = self.setups.model(RunSpec.from_dict(plan.spec), call - data.forked)
            try:
                response = await _heartbeating(model.complete(request))
            except ModelError as exc:
                raise _model_failure(exc) from exc
        return ModelCallResult.of(self.secrets.scrub(response.to_dict()), digest)

    @activity.defn(name=TOOL_CALL)
    async def tool_call(self, data: ToolCallInput) -> ToolOutcome:
        """One tool call, at most once per idempotency key unless the tool is idempotent."""
        plan = data.plan
        run_id = plan.run_id
        call = ToolCall.from_dict(data.call)
        key = f"{run_id}:{call.id}"
        async with _as_application_errors():
            setup, limit = await self.setups.setup_and_limit(plan)  # other tool code: refused
            await self._append(run_id, data.events)
            # a claim committed but not acknowledged is found `started` when made again:
            # reported uncertain, never run twice
            state, committed = await store_call(self.content.claim_tool_call, key, run_id)
            if committed is not None:
                return ToolOutcome(await self._for_workflow(plan, committed), "committed")
            if state == "started" and not data.idempotent:
                return ToolOutcome(result_dict(uncertain_result(call)), "uncertain")
            result = await _heartbeating(setup.tool_executor.execute(call))
            full: str | None = None
            if len(result.content) > limit:  # kept whole here; the run gets what it would
                full = result.content
                content, _ = truncate_output(full, limit)
                result = dataclasses.replace(result, content=content, truncated=True)
            result = await store_call(self.content.finish_tool_call, key, result, full)
            return ToolOutcome(await self._for_workflow(plan, result), "ran")

    @activity.defn(name=TOOL_OUTCOME)
    async def tool_outcome(self, data: OutcomeInput) -> ToolOutcome:
        """After a tool activity failed: store the events it carried (its attempt may have
        died before it did), then say what happened: its committed result, an uncertain
        outcome (it started), or that it never started."""
        call = ToolCall.from_dict(data.call)
        async with _as_application_errors():
            await self._append(data.run_id, data.events)
            found = await store_call(self.content.tool_call, f"{data.run_id}:{call.id}")
        if found is not None and found[1] is not None:
            if data.plan is not None:
                return ToolOutcome(await self._for_workflow(data.plan, found[1]), "committed")
            return ToolOutcome(result_dict(found[1]), "committed")
        if found is None:  # it never started: nothing happened, and the model is told so
            failed = ToolResult(call.id, call.name, data.error, is_error=True)
            return ToolOutcome(result_dict(failed), "not_run")
        return ToolOutcome(result_dict(uncertain_result(call)), "uncertain")

    @activity.defn(name=VERIFY)
    async def verify(self, data: VerifyInput) -> Verified:
        plan = data.plan
        async with _as_application_errors():
            setup = await self.setups.setup(plan)
            await self._append(plan.run_id, data.events)
            verifier = setup.verifier
            if verifier is None:
                raise ApplicationError("the run has no verifier", non_retryable=True)
            result = await _heartbeating(verifier(setup.tool_executor.context.workspace))
        checked: dict[str, Any] = self.secrets.scrub(dataclasses.asdict(result))
        return Verified(
            checked["outcome"], list(checked["passed"]), list(checked["failed"]), checked["output"]
        )

    @activity.defn(name=RECORDING)
    async def recording(self, data: RecordingInput) -> RecordingPage:
        """One page of a run's stored events after `after` (up to `upto`, or all), as a
        continued workflow replays them: long tool results as references, as the first
        workflow had them, so the page is small whatever the run's results."""
        plan, after, upto = data.plan, data.after, data.upto
        inline = _inline(plan)
        stored = await store_call(self.store.events, plan.run_id, after=after)
        page: list[dict[str, Any]] = []
        texts: dict[str, str] = {}
        size = 0
        for event in stored:
            if upto is not None and event.seq > upto:
                break
            item = event_to_dict(event)
            text = item.get("result")
            ref = reference(text, inline=inline) if isinstance(text, str) else None
            if ref is not None:
                item["result"], texts[ref[1]] = ref[0], str(text)
            page.append(item)
            size += len(json.dumps(item, default=str))
            if size >= RECORDING_PAGE_BYTES:
                break
        await store_call(self.content.save_blobs, plan.run_id, texts)
        last = int(page[-1]["seq"]) if page else after
        more = len(page) < len(stored) and (upto is None or last < upto)
        return RecordingPage(page, last, more)


def _register(store: PersistentStore, started: RunStartedEvent) -> None:
    """The row of a run whose workflow was started without one (its workflow started by
    hand, not through the Runtime): it executes on Temporal, and its row says so."""
    with contextlib.suppress(StoreError):  # registered meanwhile (a TemporalEngine start)
        store.register_run(dataclasses.replace(record_after(None, started), engine="temporal"))


def _inline(plan: RunPlan) -> bool:
    """A run that fits its conversation to a window keeps its tool results inline."""
    return RunSpec.from_dict(plan.spec).options.context_window is not None


__all__ = [
    "FULL_RESULT_CHARS",
    "HEARTBEAT_EVERY_S",
    "LEASE_OWNER",
    "LEASE_TTL_S",
    "UNCERTAIN",
    "RunActivities",
    "_as_application_errors",
    "_heartbeating",
    "result_from_dict",
    "uncertain_result",
]
