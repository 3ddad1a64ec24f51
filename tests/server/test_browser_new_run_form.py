"""The New-run form's error belongs to the tab it was made on: switching tabs does not
leave the Agent form's error under the Task form (a real Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("playwright", reason="playwright is not installed: pip install -e '.[dev]'")
from playwright.sync_api import Browser, Page, expect
from server_helpers import LiveServer, live_server, make_config, tasks_folder

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_server(make_config(tmp_path, tasks_dir=tasks_folder(tmp_path))) as live:
        yield live


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def test_an_error_of_the_agent_form_does_not_stay_under_the_task_form(
    page: Page, server: LiveServer
) -> None:
    page.goto(f"{server.url}/#/new")
    form_error = page.locator(".form-error")
    page.get_by_role("button", name="Start run").click()  # no request: the API refuses it
    expect(form_error).to_be_visible()
    expect(form_error).to_contain_text("request")
    page.locator(".tab[data-kind=task]").click()
    expect(page.locator(".kind-task")).to_be_visible()
    expect(form_error).to_be_hidden()
    page.locator(".tab[data-kind=agent]").click()
    expect(form_error).to_be_hidden()
