"""The dashboard's conversations, forks and waiting runs in a real Chromium (Debian's, through
Playwright): the follow-up box starts the next turn and opens it, the conversation shows as
one thread with each turn linked, "fork here" on a step starts a fork, and a run that ended
waiting has its gate decided and is resumed from its page."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright", reason="playwright is not installed: pip install -e '.[dev]'")
from dashboard_scene import png_size, wait_for
from playwright.sync_api import Browser, Page, expect
from server_helpers import (
    LiveServer,
    echo_script,
    live_server,
    make_config,
    start_run,
    wait_finished,
    write_script,
)

from loopwright import AgentExecutor, tool
from loopwright.store import open_store
from loopwright.testing import ScriptedModel

pytestmark = pytest.mark.browser

TIMEOUT_MS = 20_000
ARCHIVED: list[str] = []
KEEP = os.environ.get("LOOPWRIGHT_SCREENSHOTS")
"""A folder (docs/) where the screenshots are kept; unset: they stay in the test's tmp."""


def screenshot(page: Page, tmp_path: Path, name: str) -> None:
    """The page as a user sees it, checked to be a real picture of it (docs/dashboard.md)."""
    path = tmp_path / name
    page.screenshot(path=str(path), full_page=True)
    width, height = png_size(path)
    assert width == 1400 and height >= 500
    assert path.stat().st_size > 30_000  # a blank or near-blank page compresses to a few KB
    if KEEP:
        shutil.copy(path, Path(KEEP) / name)


@tool(effect="write")
def archive(name: str) -> str:
    """Move a note to the archive.

    Args:
        name: the note's file name
    """
    ARCHIVED.append(name)
    return f"archived {name}"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_server(make_config(tmp_path, store=open_store(tmp_path / "runs.db"))) as live:
        yield live


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    failed: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    yield page
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"
    assert failed == [], f"requests that failed: {failed}"


def open_run(page: Page, server: LiveServer, run_id: str) -> None:
    page.goto(f"{server.url}/#/runs/{run_id}")
    expect(page.locator("[data-field=run_id]")).to_have_text(run_id)


def test_the_follow_up_box_starts_the_next_turn(
    page: Page, server: LiveServer, tmp_path: Path
) -> None:
    script = echo_script(tmp_path / "s.json", 1, answer="echoed once")
    first = start_run(server, {"request": "echo once", "model": script, "tools": ["echo"]})
    wait_finished(server, first["run_id"])
    open_run(page, server, first["run_id"])
    expect(page.locator("[data-testid=conversation]")).to_be_hidden()  # one turn: no thread
    box = page.locator("[data-testid=follow-up]")
    box.locator("textarea").fill("and once more")
    box.get_by_role("button", name="Ask").click()

    thread = page.locator("[data-testid=conversation] li.turn")
    expect(thread).to_have_count(2)
    second = thread.nth(1).get_attribute("data-run-id")
    assert second is not None and second != first["run_id"]
    expect(page.locator("[data-field=run_id]")).to_have_text(second)  # the new turn's page
    expect(page.locator("[data-field=status]")).to_have_text("completed")
    expect(thread.nth(0)).to_contain_text("echo once")
    expect(thread.nth(0)).to_contain_text("echoed once")
    expect(thread.nth(1)).to_have_class("turn current")
    expect(thread.nth(1)).to_contain_text("and once more")
    expect(page.locator("[data-testid=follow-up]")).to_be_visible()
    screenshot(page, tmp_path, "dashboard-conversation.png")

    thread.nth(0).get_by_role("link", name="Turn 1").click()  # the turn before, linked
    expect(page.locator("[data-field=run_id]")).to_have_text(first["run_id"])
    later = page.locator("[data-testid=conversation] li.turn").nth(1)
    expect(later.get_by_role("link", name="Turn 2")).to_have_attribute("href", f"#/runs/{second}")


def test_fork_here_on_a_step(page: Page, server: LiveServer, tmp_path: Path) -> None:
    old = start_run(
        server,
        {"request": "echo thrice", "model": echo_script(tmp_path / "s.json", 3), "tools": ["echo"]},
    )
    wait_finished(server, old["run_id"])
    live_part = write_script(tmp_path / "f.json", [json.dumps({"final_answer": "forked"})])
    open_run(page, server, old["run_id"])
    steps = page.locator("[data-testid=timeline] .tl-iteration")
    expect(steps).to_have_count(4)
    expect(steps.locator(".fork-here")).to_have_count(4)
    third = steps.nth(2)
    third.get_by_role("button", name="Fork here").click()
    form = third.locator(".fork-form")
    expect(form.locator("textarea")).to_have_value("echo thrice")
    form.locator("textarea").fill("echo twice, then stop")
    form.locator("input[name=model]").fill(live_part)
    screenshot(page, tmp_path, "dashboard-fork.png")
    form.get_by_role("button", name="Fork after step 2").click()

    expect(page.locator("[data-field=run_id]")).not_to_have_text(old["run_id"])
    fork_of = page.locator("[data-field=fork_of]")
    expect(fork_of).to_have_text(f"{old['run_id']} · after step 2")
    expect(page.locator("[data-testid=outcome] .answer")).to_have_text("forked")
    expect(page.locator("[data-field=request]")).to_have_text("echo twice, then stop")


def test_a_running_run_offers_no_fork_nor_follow_up(
    page: Page, server: LiveServer, tmp_path: Path
) -> None:
    """A running run offers no fork; the page never starts one it cannot."""
    gated = start_run(
        server,
        {"request": "wait", "model": echo_script(tmp_path / "s.json", 1), "tools": ["echo"],
         "approve": ["echo"]},
    )  # fmt: skip
    open_run(page, server, gated["run_id"])
    expect(page.locator(".gate-card")).to_have_count(1)
    expect(page.locator("[data-testid=timeline] .tl-iteration")).to_have_count(1)
    expect(page.locator(".fork-here")).to_be_hidden()  # still running
    expect(page.locator("[data-testid=follow-up]")).to_be_hidden()
    page.locator("[data-action=cancel]").click()
    expect(page.locator("[data-field=status]")).to_have_text("cancelled")
    expect(page.locator(".fork-here")).to_be_visible()  # ended: forkable
    expect(page.locator("[data-testid=follow-up]")).to_be_visible()


@pytest.fixture
def served_agent(tmp_path: Path) -> Iterator[LiveServer]:
    ARCHIVED.clear()
    replies = [
        {"thought": "archive it", "action": "archive", "action_input": {"name": "a.txt"}},
        {"thought": "done", "final_answer": "Archived a.txt."},
    ]
    config = make_config(tmp_path)
    config.agent = AgentExecutor(
        ScriptedModel([json.dumps(r) for r in replies]), [archive], approve=["archive"],
        on_pending="wait",
    )  # fmt: skip
    with live_server(config) as live:
        yield live


def test_a_waiting_run_is_decided_and_resumed(
    page: Page, served_agent: LiveServer, tmp_path: Path
) -> None:
    created = start_run(served_agent, {"request": "archive the old note"})
    view: dict[str, Any] = wait_for(
        served_agent, created["run_id"], lambda v: v["status"] == "waiting"
    )
    open_run(page, served_agent, view["run_id"])
    expect(page.locator("[data-field=status]")).to_have_text("waiting")
    expect(page.locator("[data-testid=waiting-note]")).to_contain_text("then resume it")
    card = page.locator(".gate-card")
    expect(card).to_contain_text("the run ended here")
    page.goto(f"{served_agent.url}/#/")  # the run list's "waiting for approval" filter has it
    page.locator("[data-testid=run-filters] select[name=status]").select_option("waiting")
    listed = page.locator(f'[data-testid=run-list] tr[data-run-id="{view["run_id"]}"]')
    expect(listed.locator(".badge")).to_have_text("waiting")
    open_run(page, served_agent, view["run_id"])
    card = page.locator(".gate-card")
    resume = page.locator("[data-action=resume]")
    expect(resume).to_be_visible()
    assert ARCHIVED == []
    screenshot(page, tmp_path, "dashboard-waiting.png")

    card.get_by_role("button", name="Approve").click()
    expect(card).to_have_class("gate-card decided")
    resume.click()
    expect(page.locator("[data-field=status]")).to_have_text("completed")
    expect(page.locator("[data-testid=outcome] .answer")).to_have_text("Archived a.txt.")
    expect(page.locator("[data-action=resume]")).to_be_hidden()
    assert ARCHIVED == ["a.txt"]
