"""Each run's sync tools run in its tenant's thread pool, chosen by the Runtime for every
run it starts or resumes, agent and task runs alike, wherever the run was started from (a
request, Python, the CLI; the server: tests/server/test_tenants.py): `RunContext.tool_threads`, not a context variable set by
whoever started it. A task run's tools get its RunContext too."""

from __future__ import annotations

import json
from pathlib import Path

from loopwright.events import FunctionResultEvent, ToolCallEvent
from loopwright.runtime import RunSpec, Runtime
from loopwright.store import SqliteRunStore
from loopwright.tasks import TaskSpec
from loopwright.tools import TenantToolThreads

TOOLS = Path(__file__).with_name("tenant_tools.py")


def spec_for(folder: Path, tenant: str) -> RunSpec:
    script = folder / f"{tenant}.json"
    call = {"thought": "look", "action": "where", "action_input": {}}
    script.write_text(json.dumps([json.dumps(call), json.dumps({"final_answer": "seen"})]))
    return RunSpec(request="where?", model=f"scripted:{script}", tools=(f"{TOOLS}:where",),
                   workspace=str(folder), tenant=tenant)  # fmt: skip


async def test_a_runtimes_runs_use_their_tenants_pool_wherever_started(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store, tool_threads=TenantToolThreads(2))
    try:
        seen = {}
        for tenant in ("acme", "globex"):
            handle = runtime.start(spec_for(tmp_path, tenant))
            assert (await handle.wait()).status == "completed"
            (call,) = [e for e in store.events(handle.run_id) if isinstance(e, ToolCallEvent)]
            seen[tenant] = call.result
    finally:
        runtime.close()
    assert seen["acme"].startswith("tools-acme-1 acme run_")
    assert seen["globex"].startswith("tools-globex-1 globex run_")


async def test_a_task_runs_tools_get_its_run_context_and_tenants_pool(tmp_path: Path) -> None:
    task = tmp_path / "where.yaml"
    task.write_text(f"name: where\ntools: [{json.dumps(f'{TOOLS}:where')}]\nsteps:\n"
                    "  - {name: look, type: tool, tool: where}\n")  # fmt: skip
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    try:
        spec = TaskSpec(task_file=str(task), workspace=str(tmp_path), tenant="acme")
        handle = runtime.start_task(spec)
        assert (await handle.wait()).status == "completed"
        events = store.events(handle.run_id)
    finally:
        runtime.close()
    (result,) = [e for e in events if isinstance(e, FunctionResultEvent)]
    assert str(result.result) == f"tools-acme-1 acme {handle.run_id}"
