"""Two `loopwright serve` processes on two ports, one Postgres store: the same live run shows
in both dashboards (Debian's Chromium, driven by Playwright). The run executes in server A;
server B follows it through the store's live tail, and a gate approved in B's dashboard is
taken by A through the store."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from loopwright.store import open_store

pytestmark = pytest.mark.browser

TIMEOUT_MS = 20_000
GATED_TASK = """\
name: publish-notes
description: List the workspace, ask a person, then write NOTES.md.
tools: [list_files, write_file]
inputs:
  title: null
steps:
  - name: survey
    type: tool
    tool: list_files
  - name: approve
    type: gate
    message_template: "Write NOTES.md titled {inputs.title}?"
  - name: write
    type: tool
    tool: write_file
    args_from:
      content: inputs.title
    args:
      path: NOTES.md
"""


class Served:
    """A `loopwright serve` subprocess; `output` keeps what it printed."""

    def __init__(self, store: str, tasks: Path, workspace: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "loopwright", "serve", "--port", "0", "--store", store,
             "--tasks", str(tasks), "--workspace", str(workspace)],
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.process.stderr is not None
        line = self.process.stderr.readline()  # printed once the socket listens
        assert "serving the dashboard and the API on http://127.0.0.1:" in line, line
        self.url = line.split(" on ")[1].split()[0]
        self.output = [line]
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        with self.process.stderr:  # closed by its reader, at its end
            self.output.extend(self.process.stderr)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)
        self._drain.join(timeout=5)


@pytest.fixture
def two_servers(pg_url: str, tmp_path: Path) -> Iterator[tuple[Served, Served]]:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "publish-notes.yaml").write_text(GATED_TASK)
    servers = []
    for name in ("a", "b"):
        workspace = tmp_path / f"ws-{name}"
        workspace.mkdir()
        servers.append(Served(pg_url, tasks, workspace))
    yield servers[0], servers[1]
    for server in servers:
        server.stop()


def open_page(browser: Browser, url: str, errors: list[str]) -> Page:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url)
    return page


def test_one_live_run_shows_in_the_dashboards_of_two_servers(
    browser: Browser, two_servers: tuple[Served, Served], pg_url: str, tmp_path: Path
) -> None:
    a, b = two_servers
    response = httpx.post(
        f"{a.url}/api/runs", json={"task": "publish-notes", "inputs": {"title": "Release 2.0"}}
    )
    assert response.status_code == 201, response.text
    run_id = response.json()["run_id"]
    errors: list[str] = []
    pages = [open_page(browser, f"{s.url}/#/runs/{run_id}", errors) for s in (a, b)]
    for page in pages:  # the run waits at its gate, live in both
        gate = page.locator(".gate-card")
        gate.wait_for()
        assert "Write NOTES.md titled Release 2.0?" in gate.inner_text()
        assert "completed" in page.locator(".tl-step[data-step=survey]").inner_text()
        assert page.locator(".tl-step[data-step=write]").count() == 0
    record = open_store(pg_url).get_run(run_id)
    assert record is not None and record.status == "running"

    pages[1].click(".gate-card button.approve")  # decided in B, taken by A through the store
    for page in pages:
        page.locator("[data-testid=outcome]").wait_for(state="visible")
        expect(page.locator("[data-field=status]")).to_have_text("completed")
        assert "completed" in page.locator(".tl-step[data-step=write]").inner_text()
        assert page.locator(".gate-card").count() == 0
    assert (tmp_path / "ws-a" / "NOTES.md").read_text() == "Release 2.0"
    shot = tmp_path / "b.png"
    pages[1].screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    for page in pages:
        page.context.close()
    assert errors == [], f"JavaScript errors on the pages: {errors}"
    password = pg_url.split(":")[2].split("@")[0]
    assert not [line for s in (a, b) for line in s.output if password in line]
