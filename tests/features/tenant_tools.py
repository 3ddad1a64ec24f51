"""Sync tools that say which thread ran them and what run context they got (the tenant
thread-pool tests load this file as a tool file)."""

from __future__ import annotations

import threading

from loopwright import ToolContext, tool


@tool(effect="read")
def where(ctx: ToolContext) -> str:
    """Say which thread runs this call, and the run's id and tenant.

    Args:
        ctx: the call's context
    """
    run = ctx.run
    tenant = run.tenant if run is not None else "-"
    run_id = run.run_id if run is not None else "-"
    return f"{threading.current_thread().name} {tenant} {run_id}"
