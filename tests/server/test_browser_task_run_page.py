"""A task run's page in a real Chromium: its hooks' steps are named as the hooks' (not all
"step 1"), the task's steps are numbered of their total, and a completed task ends with its
summary, not an agent's "Answer"; a cancelled run does not say "cancelled" twice."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("playwright", reason="playwright is not installed: pip install -e '.[dev]'")
from playwright.sync_api import Browser, Page, expect
from server_helpers import (
    GATED_TASK,
    LiveServer,
    live_server,
    make_config,
    start_run,
    wait_finished,
    ws_events,
)

pytestmark = pytest.mark.browser

HOOK = "---\nsteps:\n  - name: {name}\n    type: tool\n    tool: list_files\n---\n{name}\n"
TASK = """name: survey
description: list the workspace twice
tools: [list_files]
steps:
  - name: first_look
    type: tool
    tool: list_files
  - name: second_look
    type: tool
    tool: list_files
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    folder = tmp_path / "tasks"
    (folder / "hooks").mkdir(parents=True)
    (folder / "survey.yaml").write_text(TASK, encoding="utf-8")
    (folder / "publish-notes.yaml").write_text(GATED_TASK, encoding="utf-8")
    for kind, name in (("pre-task", "check"), ("post-task", "report")):
        (folder / "hooks" / f"{kind}.md").write_text(HOOK.format(name=name), encoding="utf-8")
    with live_server(make_config(tmp_path, tasks_dir=folder)) as live:
        yield live


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def test_a_task_runs_hooks_and_steps_are_told_apart_and_it_ends_with_its_summary(
    page: Page, server: LiveServer
) -> None:
    run_id = start_run(server, {"task": "survey", "inputs": {}})["run_id"]
    assert wait_finished(server, run_id)["status"] == "completed"
    page.goto(f"{server.url}/#/runs/{run_id}")
    steps = page.locator(".tl-step .tl-iter")
    expect(steps).to_have_text(["pre-task hook", "step 1/2", "step 2/2", "post-task hook"])
    names = page.locator(".tl-step .tl-tool-name")
    expect(names).to_have_text(["check", "first_look", "second_look", "report"])
    outcome = page.get_by_test_id("outcome")
    expect(outcome.locator("h2")).to_have_text("Task completed")
    expect(outcome).to_contain_text("2 steps done")
    expect(outcome).not_to_contain_text("Answer")


def test_a_cancelled_run_says_cancelled_once(page: Page, server: LiveServer) -> None:
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "No"}})["run_id"]
    gate = ws_events(server, run_id, until="confirmation_required")[-1]
    url = f"{server.url}/api/runs/{run_id}/gates/{gate['request_id']}"
    assert httpx.post(url, json={"approve": False}).status_code == 200
    finished = wait_finished(server, run_id)
    assert (finished["status"], finished["reason"]) == ("cancelled", "cancelled")
    page.goto(f"{server.url}/#/runs")
    row = page.locator("tr", has=page.get_by_text(run_id))
    expect(row.locator(".status-cell")).to_have_text("cancelled")
    page.goto(f"{server.url}/#/runs/{run_id}")
    outcome = page.get_by_test_id("outcome")
    expect(outcome.locator("h2")).to_have_text("Run cancelled")
    expect(outcome).not_to_contain_text("Reason: cancelled")


def test_a_reviewer_names_themselves_on_the_gate_card(page: Page, server: LiveServer) -> None:
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "No"}})["run_id"]
    ws_events(server, run_id, until="confirmation_required")
    page.goto(f"{server.url}/#/runs/{run_id}")
    page.locator(".gate-by").fill("Ana Ops")
    page.locator(".gate-reason").fill("not during the freeze")
    page.locator(".gate-buttons .reject").click()
    assert wait_finished(server, run_id)["status"] == "cancelled"
    events = httpx.get(f"{server.url}/api/runs/{run_id}/events").json()["events"]
    [decision] = [e for e in events if e["type"] == "gate_decision"]
    assert decision["decided_by"] == "Ana Ops (api:default)"
    assert decision["reason"] == "not during the freeze"
    page.reload()  # the next gate card remembers the name, in this browser
    assert page.evaluate("localStorage.getItem('loopwright.reviewer')") == "Ana Ops"
