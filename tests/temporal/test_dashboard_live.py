"""The dashboard in Chromium (issue 17, test 7): `loopwright serve`, reading the same
Postgres store, shows live in its timeline the events of a run executing on a Temporal
worker in another process. The browser, the page and the server process are the Postgres
dashboard tests' own (tests/store/test_pg_dashboards.py)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip(
    "playwright", reason="the browser tests need playwright (pip install -e '.[dev]')"
)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))

from playwright.sync_api import Browser, expect
from temporal_helpers import Workers, action, final, loopwright_env
from temporalio.client import WorkflowExecutionStatus
from test_pg_dashboards import TIMEOUT_MS, Served, open_page

from loopwright.engines.temporal import connect
from loopwright.store import open_store

pytestmark = pytest.mark.browser
TOOLS = Path(__file__).with_name("run_tools.py")


def until_exists(path: Path, workers: Workers, limit_s: float) -> None:
    """Until the tool's signal file exists (bounded)."""
    deadline = time.monotonic() + limit_s
    while not path.exists():
        assert time.monotonic() < deadline, f"no {path} in {limit_s:g}s:\n{workers.logs()}"
        time.sleep(0.05)


def workflow_status(address: str, run_id: str) -> WorkflowExecutionStatus | None:
    """The run's workflow status, asked from a thread of its own (the page's Playwright
    drives an event loop in this one)."""

    async def ask() -> WorkflowExecutionStatus | None:
        client = await connect(address)
        return (await client.get_workflow_handle(run_id).describe()).status

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, ask()).result(timeout=60)


class Started:
    """`loopwright run --engine temporal --json` in its own process: its first line names
    the run; it exits when the run ends."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=loopwright_env())  # fmt: skip
        assert self.process.stdout is not None
        first = json.loads(self.process.stdout.readline())
        assert first["type"] == "run_started", first
        self.run_id = str(first["run_id"])
        self.lines: list[str] = []
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:  # closed by its reader, at its end
            self.lines.extend(self.process.stdout)

    def finish(self) -> tuple[int, str]:
        code = self.process.wait(timeout=120)
        self._drain.join(timeout=5)
        assert self.process.stderr is not None
        with self.process.stderr:
            return code, self.process.stderr.read()


def test_the_dashboard_shows_a_worker_run_live(
    browser: Browser,
    workers: Workers,
    tmp_path: Path,
) -> None:
    release = tmp_path / "release"
    script = tmp_path / "script.json"
    replies = [action("echo", text="hello dashboard"), action("hold", path=str(release)),
               final("released")]  # fmt: skip
    script.write_text(json.dumps(replies))
    (tmp_path / "tasks").mkdir()
    served = Served(workers.store, tmp_path / "tasks", tmp_path)
    worker = workers.start()
    command = [sys.executable, "-m", "loopwright", "run", "echo, then hold", "--model",
               f"scripted:{script}", "--tools", f"echo,{TOOLS}:hold", "--workspace",
               str(tmp_path), "--store", workers.store, "--json", "--engine", "temporal",
               "--temporal", workers.address, "--task-queue", workers.queue]  # fmt: skip
    errors: list[str] = []
    try:
        run = Started(command)
        until_exists(Path(f"{release}.held"), workers, 90)  # the worker is inside `hold`
        assert Path(f"{release}.held").read_text() == str(worker.pid)
        page = open_page(browser, f"{served.url}/#/runs/{run.run_id}", errors)
        expect(page.locator("[data-field=conn]")).to_have_text("live", timeout=TIMEOUT_MS)
        tools = page.locator(".tl-tool.ok")
        expect(tools).to_have_count(1, timeout=TIMEOUT_MS)  # echo, shown while held
        assert page.locator(".tl-tool .tl-result").first.inner_text() == "hello dashboard"
        expect(page.locator("[data-field=status]")).to_have_text("running", timeout=TIMEOUT_MS)
        assert page.locator("[data-testid=outcome]").is_hidden()
        status = workflow_status(workers.address, run.run_id)
        assert status == WorkflowExecutionStatus.RUNNING  # on the worker, still in `hold`

        release.write_text("go")  # the tool returns; the rest arrives live
        expect(tools).to_have_count(2, timeout=TIMEOUT_MS)
        expect(page.locator("[data-testid=outcome]")).to_contain_text(
            "released", timeout=TIMEOUT_MS
        )
        expect(page.locator("[data-field=status]")).to_have_text("completed", timeout=TIMEOUT_MS)
        code, err = run.finish()
        assert code == 0, err
        rows = page.evaluate(
            "[...document.querySelectorAll('.timeline > li')].map(li => [li.className, +li.dataset.seq])"
        )
        page.context.close()
    finally:
        served.stop()
    store = open_store(workers.store)
    try:
        stored = store.events(run.run_id)
    finally:
        store.close()
    assert len({tuple(row) for row in rows}) == len(rows)  # no row shown twice
    assert max(seq for _, seq in rows) == stored[-1].seq
    assert [json.loads(line)["seq"] for line in run.lines][-1] == stored[-1].seq
    assert errors == [], f"JavaScript errors on the page: {errors}"
