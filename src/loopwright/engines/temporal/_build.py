"""One agent run's RunSetup, built the same way in the workflow and in the activities.

In the workflow, the run's scrubber has every detector but reads nothing of the worker's
environment (a replay on another worker makes the same events); the worker's own secrets,
its environment's included, are scrubbed from what its activities return and store
(`WorkerSecrets`).

The workflow never resolves the model (that can read files or reach a server): it gets a
`RemoteModel` with the name and tool mode the `prepare` activity found, and every call of
it is an activity. The workspace section of the system prompt is also computed once, by
`prepare` on a worker, and given to every later step, so the prompt stays the same
whichever worker runs a step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loopwright.agent import AgentExecutor
from loopwright.agent._lineage import NO_LINEAGE, Lineage
from loopwright.agent._setup import RunSetup
from loopwright.engines.temporal._mcp import stand_ins
from loopwright.engines.temporal._payloads import RunPlan
from loopwright.engines.temporal._worker_agent import run_agent
from loopwright.errors import ModelError
from loopwright.messages import ModelRequest, ModelResponse
from loopwright.models import Model
from loopwright.models._base import ToolMode
from loopwright.run_context import RunContext
from loopwright.runtime import RunSpec
from loopwright.safety.scrub import Scrubber
from loopwright.tools import Tool


@dataclass(frozen=True)
class RemoteModel:
    """Stands for the run's model inside the workflow: the model activity calls the real one."""

    model_name: str
    tool_mode: ToolMode

    @property
    def name(self) -> str:
        return self.model_name

    @property
    def preferred_tool_mode(self) -> ToolMode:
        return self.tool_mode

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("the Temporal engine calls the model in an activity, never here")


def build_setup(
    plan: RunPlan,
    model: Model | None = None,
    *,
    mcp_tools: Sequence[Tool] | None = None,
    secrets: Sequence[str] = (),
    on_worker: Callable[[RunContext], RunContext] | None = None,
    lineage: Lineage = NO_LINEAGE,
) -> tuple[AgentExecutor, RunSetup]:
    """The executor and RunSetup of `plan` (with `model`, or its RemoteModel stand-in; with
    the run's MCP tools, or their stand-ins; scrubbing also `secrets`, a worker's own; its
    context completed by `on_worker` on a worker: engines/temporal/_subagents.py; what it
    takes from earlier runs: `lineage`, in the workflow). A run of an agent built in
    Python is the worker's agent's (engines/temporal/_worker_agent.py)."""
    spec = RunSpec.from_dict(plan.spec)
    if mcp_tools is None:
        mcp_tools = stand_ins(plan.mcp_tools or ())
    in_workflow = on_worker is None  # its scrubber must not read the worker's environment
    agent = run_agent(
        spec, model or RemoteModel(plan.model_name, plan.tool_mode), mcp_tools,
        scrubber=Scrubber() if in_workflow else None,
    )  # fmt: skip
    if secrets:
        agent.scrubber = agent.scrubber.with_secrets(secrets)
    context = agent.run_context(plan.run_id, tenant=spec.tenant, parent_run_id=plan.parent_run_id)
    if on_worker is not None:
        context = on_worker(context)
    setup = agent.setup(
        spec.request,
        context,
        spec=spec.to_dict(),
        workspace_section=plan.workspace_section or "",
        lineage=lineage,
    )
    return agent, setup
