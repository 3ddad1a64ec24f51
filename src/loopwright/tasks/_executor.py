"""TaskExecutor: runs a task's steps in order and streams the run's events (seed 004).

A convenience over `run_task(plan, fx)`: it builds the run's EventLog and Effects itself
(as AgentExecutor.effects does), with `sink` seeing every event before `execute` yields it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from loopwright.agent._process import new_run_id
from loopwright.clock import Clock, SystemClock
from loopwright.effects import Effects, EventLog, LiveEffects
from loopwright.effects._log import EventSink, send_event
from loopwright.events import Event
from loopwright.models import Model
from loopwright.safety.operations import SnapshotHook
from loopwright.safety.scrub import Scrubber
from loopwright.tasks._gates import GateBroker
from loopwright.tasks._loader import LoadedTask
from loopwright.tasks._models import TaskDefinition, TaskRunState
from loopwright.tasks._resume import recorded_effects
from loopwright.tasks._run import run_task
from loopwright.tasks._spec import TaskPlan, TaskSettings, TaskSpec, resolve_inputs
from loopwright.tasks._state import StateFileExporter, check_folder_name, rebuild_state
from loopwright.tools import ToolRegistry


class TaskExecutor:
    """Runs deterministic tasks: tool, agent and gate steps, with hooks, backups and state.

    Every event goes to `sink` first (e.g. `Runtime.publish`, which appends it to the run
    store), then out of `execute`. Gates wait on `gates` (a GateBroker shared with the CLI
    prompt and the HTTP API, which may also watch the run store for decisions).
    """

    def __init__(
        self,
        model: Model | None,
        tools: ToolRegistry,
        *,
        settings: TaskSettings | None = None,
        sink: EventSink | None = None,
        gates: GateBroker | None = None,
        snapshot_hooks: Mapping[str, SnapshotHook] | None = None,
        clock: Clock | None = None,
        scrubber: Scrubber | None = None,
        model_spec: str | None = None,
        model_base_url: str | None = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.settings = settings or TaskSettings()
        self.sink = sink
        self.gates = gates or GateBroker()
        self.snapshot_hooks = dict(snapshot_hooks or {})
        self.clock = clock or SystemClock()
        self.scrubber = scrubber or Scrubber.default()
        self.model_spec = model_spec
        """Recorded in the run's TaskSpec, so a resumed run can resolve the same model."""
        self.model_base_url = model_base_url
        root = self.settings.state_root
        self.exporter = StateFileExporter(root) if root is not None else None

    @classmethod
    def for_task(
        cls, loaded: LoadedTask, model: Model | None = None, **kwargs: Any
    ) -> TaskExecutor:
        """An executor with a loaded task's tools and snapshot hooks."""
        kwargs.setdefault("snapshot_hooks", loaded.snapshot_hooks)
        return cls(model, loaded.registry, **kwargs)

    def plan(
        self,
        task_def: TaskDefinition,
        user_message: str = "",
        session_context: Mapping[str, Any] | None = None,
        client_name: str = "default",
    ) -> TaskPlan:
        """One run of `task_def`, resolved (a ConfigurationError if an input is missing, a
        UsageError if `client_name` cannot name the folder of its state file)."""
        if self.exporter is not None:
            check_folder_name(client_name, "client name")
        inputs = resolve_inputs(task_def, session_context or {})
        spec = TaskSpec.of(
            task_def,
            self.settings,
            inputs=session_context or {},
            request=user_message,
            tenant=client_name,
            model=self.model_spec,
            base_url=self.model_base_url,
        )
        return TaskPlan(
            spec=spec,
            task=task_def,
            registry=self.tools,
            model=self.model,
            settings=self.settings,
            inputs=inputs,
            snapshot_hooks=self.snapshot_hooks,
            agent_events=self.sink,
        )

    def effects(
        self, run_id: str, *, sink: EventSink | None = None, recorded: Sequence[Event] = ()
    ) -> Effects:
        """In-process effects for one run: live, or served from `recorded` first."""
        if recorded:
            return recorded_effects(
                recorded, gates=self.gates, sink=sink, clock=self.clock, scrubber=self.scrubber
            )
        log = EventLog(run_id, clock=self.clock, scrubber=self.scrubber, sink=sink)
        return LiveEffects(log, clock=self.clock, gates=self.gates)

    async def execute(
        self,
        task_def: TaskDefinition,
        user_message: str = "",
        session_context: Mapping[str, Any] | None = None,
        client_name: str = "default",
        *,
        run_id: str | None = None,
        recorded: Sequence[Event] = (),
    ) -> AsyncIterator[Event]:
        """Run the task; yield its events (run_started ... task_complete, run_finished).

        `session_context` holds the run's inputs (over the task's defaults). `recorded`:
        the events of an earlier process of the same run, to resume it (only the events
        after them are sent and yielded).
        """
        plan = self.plan(task_def, user_message, session_context, client_name)
        run_id = recorded[0].run_id if recorded else run_id or new_run_id()
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        user_sink = self.sink

        async def sink(event: Event) -> None:
            if user_sink is not None:
                await send_event(user_sink, event)
            queue.put_nowait(event)

        job = asyncio.create_task(
            run_task(plan, self.effects(run_id, sink=sink, recorded=recorded))
        )
        job.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            job.result()
        finally:
            if not job.done():
                job.cancel()
                await asyncio.gather(job, return_exceptions=True)

    async def run(
        self,
        task_def: TaskDefinition,
        user_message: str = "",
        session_context: Mapping[str, Any] | None = None,
        client_name: str = "default",
        **kwargs: Any,
    ) -> TaskRunState:
        """Run to the end; the final state (its events went to the sink)."""
        events = [*kwargs.get("recorded", ())]
        events += [
            e
            async for e in self.execute(
                task_def, user_message, session_context, client_name, **kwargs
            )
        ]
        return rebuild_state(events)

    def run_sync(self, task_def: TaskDefinition, *args: Any, **kwargs: Any) -> TaskRunState:
        """`run` for code that is not async."""
        return asyncio.run(self.run(task_def, *args, **kwargs))
