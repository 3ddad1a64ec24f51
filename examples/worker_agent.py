"""Your own agent on Temporal workers (examples/worker_agent.sh): a worker started with
`loopwright worker --agent worker_agent.py:support` runs the runs started with
`loopwright run --agent worker_agent.py:support --engine temporal`, from this agent: its
model, its tools, its options. A ScriptedModel stands in for the LLM; yours would be a
real model (its key in the worker's environment, never in the run's spec)."""

from __future__ import annotations

import json

from loopwright import AgentExecutor, AgentOptions, tool
from loopwright.testing import ScriptedModel

ORDERS = {"42": "shipped on Monday", "43": "waiting for stock"}


@tool(effect="read")
def order_status(order_id: str) -> str:
    """The status of an order.

    Args:
        order_id: the order's number
    """
    return ORDERS.get(order_id, "no such order")


def support() -> AgentExecutor:
    """A factory: the worker calls it once, when it starts."""
    replies = [
        {"thought": "look it up", "action": "order_status", "action_input": {"order_id": "42"}},
        {"thought": "done", "final_answer": "Order 42 was shipped on Monday."},
    ]
    model = ScriptedModel([json.dumps(reply) for reply in replies], name="support-model")
    return AgentExecutor(model, [order_status], options=AgentOptions(max_iterations=5))
