"""The agent built in Python a worker was started with (`loopwright worker --agent
module:attribute`), and how a run whose spec names an agent is built from it.

A worker's operator names the code; the worker loads it once, when it starts. A run whose
spec names an agent (`RunSpec.agent`) runs only on a worker started with that same
reference (`WorkerAllows.check_run` refuses it elsewhere), and is built from the worker's
agent: its model, tools, instructions and options, with the spec's request, tenant and
conversation. Nothing a spec names is imported: the reference is only compared.

The workflow, sandboxed (engines/temporal/_sandbox.py), reaches the worker's agent here:
this module is passed through the sandbox, so what it holds is the worker process's.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from loopwright.agent import AgentExecutor
from loopwright.errors import ConfigurationError
from loopwright.models import Model, resolve_model
from loopwright.runtime import RunSpec
from loopwright.runtime._spec import build_agent
from loopwright.safety.scrub import Scrubber
from loopwright.tools import Tool

_HELD: dict[str, AgentExecutor[Any, Any]] = {}
"""The agents of the workers of this process, by the reference they were started with."""


def hold_worker_agent(ref: str, agent: AgentExecutor[Any, Any]) -> None:
    """Keep `agent` as this process's agent named `ref` (a worker's, for its runs). One
    that needs deps is refused: a worker gives its runs none."""
    try:
        agent.check_deps(None)
    except TypeError as exc:
        why = f"--agent {ref!r}: a worker gives its runs no deps ({exc})"
        raise ConfigurationError(why) from None
    _HELD[ref] = agent


def worker_agent(ref: str) -> AgentExecutor[Any, Any]:
    found = _HELD.get(ref)
    if found is None:
        raise ConfigurationError(
            f"this worker was not started with --agent {ref}: it cannot run the runs of that agent"
        )
    return found


def run_model(spec: RunSpec) -> Model:
    """The model a run calls on a worker: its worker's agent's, for a run of an agent
    built in Python (whatever its spec's `model` says); else the one its spec names."""
    if spec.agent is not None:
        return worker_agent(spec.agent).model
    return resolve_model(spec.model, base_url=spec.base_url)


def run_agent(
    spec: RunSpec,
    model: Model,
    extra_tools: Sequence[Tool] = (),
    *,
    scrubber: Scrubber | None = None,
) -> AgentExecutor[Any, Any]:
    """The AgentExecutor of a run, with `model` (the real one, or the workflow's stand-in)
    and `scrubber` (None: the agent's own): the worker's agent, for a spec that names one
    (its MCP servers, tools and options are the agent's, never the spec's); else the
    agent the spec describes, with `extra_tools` (its MCP servers' tools)."""
    if spec.agent is None:
        return build_agent(spec, model, extra_tools, scrubber=scrubber)
    agent = copy.copy(worker_agent(spec.agent))  # the run's: its model and scrubber its own
    agent.model = model
    if scrubber is not None:
        agent.scrubber = scrubber
    return agent
