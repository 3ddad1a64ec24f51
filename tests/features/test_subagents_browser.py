"""A sub-agent's timeline nested under its call in the dashboard (a real Chromium), live:
the run is executed by another Runtime on the same SQLite store (as by `loopwright run`
in another process), and the server follows both runs through the store."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_helpers import live_server, make_config

from loopwright import AgentExecutor
from loopwright.events import ToolCallStartedEvent
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

pytestmark = pytest.mark.browser
TIMEOUT_MS = 20_000


def act(name: str, **arguments: Any) -> str:
    return json.dumps({"thought": f"use {name}", "action": name, "action_input": arguments})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def test_child_timeline_is_nested_under_the_call(browser: Browser, tmp_path: Path) -> None:
    release = threading.Event()

    @tool(effect="read")
    async def measure(what: str) -> str:
        """Measure something (waits until the test lets it finish).

        Args:
            what: what to measure
        """
        await asyncio.to_thread(release.wait, 30)
        return f"{what}: 42 cm"

    child = AgentExecutor(
        ScriptedModel([act("measure", what="the table"), final("the table is 42 cm")]), [measure]
    )
    parent = AgentExecutor(
        ScriptedModel([act("surveyor", request="measure the table"), final("42 cm, by survey")]),
        [child.as_tool("surveyor", "Measures things.")],
    )
    path = tmp_path / "runs.db"

    async def execute() -> None:
        store = SqliteRunStore(path)
        runtime = Runtime(store)
        try:
            await runtime.start_agent(parent, "how long is the table?", run_id="run_top").wait()
        finally:
            runtime.close()
            store.close()

    worker = threading.Thread(target=asyncio.run, args=(execute(),), daemon=True)
    worker.start()
    try:
        reader = SqliteRunStore(path)
        with live_server(make_config(tmp_path, store=reader)) as server:
            page = browser.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{server.url}/#/runs/run_top")
            nested = page.locator(".timeline.nested")  # the one sub-agent's run
            expect(nested).to_contain_text("Run started")
            expect(nested).to_contain_text("measure")  # the child's own call, still running
            release.set()
            expect(nested).to_contain_text("the table is 42 cm")
            expect(page.locator("[data-field=status]")).to_have_text("completed")
            surveyor_row = page.locator(".tl-tool", has=nested)
            expect(surveyor_row).to_contain_text("surveyor")
            [child_id] = [
                e.child_run_id
                for e in reader.events("run_top")
                if isinstance(e, ToolCallStartedEvent)
            ]
            expect(nested).to_have_attribute("data-run-id", str(child_id))
            assert errors == []
            page.close()
    finally:
        release.set()
        worker.join(timeout=30)
