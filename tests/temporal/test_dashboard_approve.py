"""The dashboard's Approve button in Chromium, on `loopwright serve --engine temporal`: a
task run started through the API waits at its gate on a worker in another process; the
page shows it waiting (and offers Cancel: the run is live on the workers); Approve sends
the workflow's Update, and the run completes with its one write."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip(
    "playwright", reason="the browser tests need playwright (pip install -e '.[dev]')"
)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))

from playwright.sync_api import Browser, expect
from temporal_helpers import Workers
from test_pg_dashboards import TIMEOUT_MS, open_page
from test_serve_engine import server  # noqa: F401

from loopwright.events import ConfirmationRequiredEvent
from loopwright.store import open_store

pytestmark = pytest.mark.browser


GATE_BOUND_S = 120.0
"""How long the worker may take to reach the gate of a run it took (a loaded machine)."""


def gate_stored(store_url: str, run_id: str) -> None:
    store = open_store(store_url)
    try:
        deadline = time.monotonic() + GATE_BOUND_S
        while not any(isinstance(e, ConfirmationRequiredEvent) for e in store.events(run_id)):
            assert time.monotonic() < deadline, f"no gate stored in {GATE_BOUND_S:g} s"
            time.sleep(0.1)  # polling the store for another process's event
    finally:
        store.close()


def test_approve_in_the_dashboard_decides_a_gate_in_the_workflow(
    browser: Browser,
    server: str,  # noqa: F811
    workers: Workers,
    tmp_path: Path,
) -> None:
    out = tmp_path / "out.txt"
    out.write_text("", encoding="utf-8")
    workers.start()
    workers.wait_polling()
    body = {"task": "gated-append", "inputs": {"out": str(out)}}
    created = httpx.post(f"{server}/api/runs", json=body, timeout=60)
    assert created.status_code == 201, created.text
    run_id = created.json()["run_id"]
    gate_stored(workers.store, run_id)  # what the page is asked to show is there to show
    errors: list[str] = []
    page = open_page(browser, f"{server}/#/runs/{run_id}", errors)
    card = page.locator(".gate-card")
    expect(card).to_contain_text(f"Append to {out}?", timeout=TIMEOUT_MS)
    expect(page.locator("[data-action=cancel]")).to_be_visible(timeout=TIMEOUT_MS)
    assert out.read_text() == ""  # nothing after the gate yet
    page.click(".gate-card button.approve")
    expect(page.locator("[data-field=status]")).to_have_text("completed", timeout=TIMEOUT_MS)
    approved = page.locator("li", has_text="Approved by api:default")
    expect(approved).to_have_count(1, timeout=TIMEOUT_MS)
    assert page.locator(".gate-card").count() == 0
    page.context.close()
    assert errors == []
    assert out.read_text() == "after-the-gate\n"
