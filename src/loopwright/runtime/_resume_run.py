"""`resume_run`: a script's or a test's shortcut to resume a stored run to its end."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from loopwright.agent import AgentExecutor, ExecutionResult
from loopwright.effects._log import EventSink
from loopwright.models import Model
from loopwright.runtime._runtime import Runtime
from loopwright.store import RunStore


async def resume_run(
    store: RunStore,
    run_id: str,
    *,
    secrets: Iterable[str] = (),
    on_event: EventSink | None = None,
    model: Model | None = None,
    agent: AgentExecutor[Any, Any] | None = None,
    deps: Any = None,
) -> ExecutionResult:
    """Resume an interrupted (or `waiting`) agent run to its end in a Runtime of its own (a
    script's or a test's shortcut for `Runtime(store).resume(...)`, then `wait()`). A run
    of an agent built in code is given the `agent` again, and its `deps`
    (`Runtime.resume_agent`)."""
    runtime = Runtime(store)
    try:
        if agent is not None:
            handle = await runtime.resume_agent(agent, run_id, deps=deps, on_event=on_event)
        else:
            handle = await runtime.resume(run_id, secrets=secrets, on_event=on_event, model=model)
        result: ExecutionResult = await handle.wait()
        return result
    finally:
        runtime.close()
