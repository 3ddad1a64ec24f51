"""The dashboard as a user meets it, in a real Chromium (Debian's, through Playwright): the
run list (a run waiting for approval, sub-agent runs under their lead, ids, durations,
filters, no overflow at 1,400 px), a run's span waterfall with each model call's messages
sent, raw reply, tokens and latency, a waiting gate, a nested sub-agent, the New-run form's
offered models.

Each test takes its screenshot and checks it is a real picture of the page. To keep them as
the docs' images: LOOPWRIGHT_SCREENSHOTS=docs pytest -m browser tests/server/test_browser_dashboard.py
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("playwright", reason="playwright is not installed: pip install -e '.[dev]'")
from dashboard_scene import (
    LONG_MODEL,
    PACED_REPLIES,
    SECONDS_PER_CALL,
    Scene,
    dashboard_scene,
    png_size,
    wait_for,
)
from playwright.sync_api import Browser, Locator, Page, expect
from server_helpers import start_run

pytestmark = pytest.mark.browser

TIMEOUT_MS = 20_000
WIDTH = 1400
KEEP = os.environ.get("LOOPWRIGHT_SCREENSHOTS")
"""A folder (docs/) where the screenshots are kept; unset: they stay in the test's tmp."""


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    with dashboard_scene(tmp_path_factory.mktemp("scene")) as built:
        yield built


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
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


def screenshot(page: Page, tmp_path: Path, name: str, *, down_to: Locator | None = None) -> Path:
    """The page (down to the bottom of `down_to`), checked to be a real picture of it."""
    path = tmp_path / name
    if down_to is None:
        page.screenshot(path=str(path), full_page=True)
    else:
        box = down_to.bounding_box()
        assert box is not None
        bottom = box["y"] + box["height"] + 10 + page.evaluate("window.scrollY")
        page.screenshot(path=str(path), full_page=True, clip={"x": 0, "y": 0, "width": WIDTH,
                                                               "height": bottom})  # fmt: skip
    width, height = png_size(path)
    assert (width, height >= 500) == (WIDTH, True)
    assert path.stat().st_size > 30_000  # a blank or near-blank page compresses to a few KB
    if KEEP:
        shutil.copy(path, Path(KEEP) / name)
    return path


def row(page: Page, run_id: str) -> Locator:
    return page.locator(f'[data-testid=run-list] tr[data-run-id="{run_id}"]')


def seconds(text: str) -> float:
    """'912 ms', '1.40 s' or '3.2 s' as seconds."""
    match = re.fullmatch(r"([\d.,]+) (ms|s)", text.strip())
    assert match is not None, text
    value = float(match.group(1).replace(",", ""))
    return value / 1000 if match.group(2) == "ms" else value


def test_the_run_list(page: Page, scene: Scene, tmp_path: Path) -> None:
    page.goto(scene.server.url + "/#/")
    expect(row(page, scene.lead)).to_have_count(1)
    waiting = row(page, scene.waiting)
    expect(waiting.locator(".badge")).to_have_text("waiting for approval")
    assert waiting.locator("td").nth(5).inner_text() == "–"  # a task run: no tokens
    assert waiting.locator("td").nth(6).inner_text() == "–"  # and no cost
    ids = page.locator("[data-testid=run-list] tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.runId)"
    )
    assert ids[ids.index(scene.lead) + 1] == scene.child  # the sub-agent run under its lead
    child = row(page, scene.child)
    assert "child" in (child.get_attribute("class") or "")
    assert child.locator(".request-cell").inner_text().startswith("↳")
    assert "1 sub-agent run" in row(page, scene.lead).inner_text()
    paced = row(page, scene.paced)
    assert paced.locator(".run-id").inner_text() == scene.paced  # the whole id
    assert seconds(paced.locator("td").nth(7).inner_text()) >= sum(SECONDS_PER_CALL) - 0.05
    stopped = row(page, scene.long_model)
    assert stopped.locator(".status-cell").inner_text() == "stopped\nmax_iterations"
    assert stopped.locator(".model").get_attribute("title") == LONG_MODEL
    overflow = page.evaluate(
        "[document.documentElement.scrollWidth, document.querySelector('table.runs').scrollWidth,"
        " document.querySelector('table.runs').parentElement.clientWidth]"
    )
    assert overflow[0] <= WIDTH and overflow[1] <= overflow[2], overflow
    screenshot(page, tmp_path, "dashboard-runs.png")

    page.select_option("select[name=status]", "waiting")
    expect(page.locator("[data-testid=run-list] tbody tr")).to_have_count(1)
    expect(waiting).to_have_count(1)
    page.select_option("select[name=status]", "")
    page.select_option("select[name=kind]", "task")
    assert set(page.locator("tbody tr").evaluate_all("rs => rs.map(r => r.dataset.status)")) == {
        "waiting for approval"
    }
    page.select_option("select[name=kind]", "")
    page.fill("input[name=q]", scene.child)  # a sub-agent run shows with its lead
    expect(page.locator("[data-testid=run-list] tbody tr")).to_have_count(2)
    page.click(f'tr[data-run-id="{scene.lead}"] button.subruns')  # fold it away
    expect(page.locator("[data-testid=run-list] tbody tr")).to_have_count(1)


FILE_END_VISIBLE = """cell => {
  const td = cell.closest("td").getBoundingClientRect();
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  let last = null;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.data.trim()) last = node;
  const text = last.data.replace(/\\u200e/g, "");
  const range = document.createRange();
  const end = last.data.lastIndexOf(text.slice(-5));
  range.setStart(last, end);
  range.setEnd(last, end + 5);
  const box = range.getBoundingClientRect();
  return {shown: text.slice(-5), inside: box.left >= td.left && box.right <= td.right};
}"""
"""The last five letters of the model cell's text, and whether they are drawn inside its cell."""


def test_cut_cells_keep_the_end_that_matters(page: Page, scene: Scene) -> None:
    """A model spec that is a file path keeps its file name's end in view; a duration of
    59 min 59 s is shown whole; both cells carry their full text as a tooltip."""
    created = httpx.get(f"{scene.server.url}/api/runs/{scene.waiting}").json()["created_at"]
    page.clock.set_fixed_time(created + 3599.2)  # the running run's age, as the page sees it
    page.goto(scene.server.url + "/#/")
    model = row(page, scene.long_model).locator(".model")
    expect(model).to_have_attribute("title", LONG_MODEL)
    assert model.evaluate(FILE_END_VISIBLE) == {"shown": ".gguf", "inside": True}
    duration = row(page, scene.waiting).locator("td").nth(7)
    expect(duration).to_have_text("59 min 59 s")
    assert duration.locator("span").get_attribute("title") == "59 min 59 s"
    assert duration.evaluate("td => td.scrollWidth <= td.clientWidth"), "the duration is cut"


def test_model_call_spans_and_what_each_call_sent(page: Page, scene: Scene, tmp_path: Path) -> None:
    page.goto(f"{scene.server.url}/#/runs/{scene.paced}")
    expect(page.locator("[data-testid=outcome]")).to_contain_text("Release 1.4.0")
    calls = page.locator(".wf-model")
    expect(calls).to_have_count(4)
    events = httpx.get(f"{scene.server.url}/api/runs/{scene.paced}/events").json()["events"]
    replies = [e for e in events if e["type"] == "model_response"]
    for index, (delay, reply) in enumerate(zip(SECONDS_PER_CALL, replies, strict=True)):
        span = calls.nth(index)
        assert seconds(span.locator(".wf-dur").inner_text()) >= delay  # the call's latency
        usage = reply["response"]["usage"]
        tokens = f"{usage['input_tokens']:,} → {usage['output_tokens']:,} tokens"
        assert span.locator(".wf-meta").inner_text() == tokens
    assert page.locator(".wf-tool").count() == 3
    assert [r.inner_text() for r in page.locator(".wf-tool .wf-name").all()] == [
        "list_files", "read", "echo",
    ]  # fmt: skip

    calls.nth(1).click()
    detail = page.locator(".wf-detail .call-detail")
    expect(detail.locator("h4").first).to_have_text("Messages sent (4)")
    messages = detail.locator(".call-msg")
    roles = messages.locator(".call-role").all_text_contents()
    assert roles == ["system", "user", "assistant", "user"]
    assert "- read(path: string" in messages.nth(0).inner_text()  # the tools as signatures
    assert "): Read a text file in the workspace" in messages.nth(0).inner_text()
    request = messages.nth(1).locator(".call-text").inner_text()  # with its note, kept
    assert request == "Write the release notes for 1.4\n\n[Iteration 1 of at most 10]"
    assert messages.nth(2).locator(".call-text").inner_text() == PACED_REPLIES[0]
    assert "Observation from list_files" in messages.nth(3).inner_text()
    assert detail.locator(".call-reply .call-text").inner_text() == PACED_REPLIES[1]
    facts = dict(zip(detail.locator(".call-facts dt").all_text_contents(),
                     detail.locator(".call-facts dd").all_text_contents(), strict=True))  # fmt: skip
    usage = replies[1]["response"]["usage"]
    assert facts["Input tokens"] == f"{usage['input_tokens']:,}"
    assert facts["Output tokens"] == f"{usage['output_tokens']:,}"
    assert facts["Latency"] == calls.nth(1).locator(".wf-dur").inner_text()
    assert facts["Finish reason"] == "stop"
    screenshot(page, tmp_path, "dashboard-spans.png", down_to=page.locator(".waterfall"))

    model_rows = page.locator(".tl-model")
    expect(model_rows).to_have_count(4)
    first = model_rows.first
    assert seconds(first.locator(".tl-duration").inner_text()) >= SECONDS_PER_CALL[0]
    assert first.locator(".tl-tokens").inner_text().endswith("out")
    first.locator("details.tl-call summary").click()
    expect(first.locator(".call-msg")).to_have_count(2)  # the first call: system, request


def test_a_run_waiting_at_its_gate(page: Page, scene: Scene, tmp_path: Path) -> None:
    page.goto(f"{scene.server.url}/#/runs/{scene.waiting}")
    expect(page.locator(".gate-card")).to_contain_text("Write NOTES.md titled Release 1.4?")
    expect(page.locator("[data-field=status]")).to_have_text("waiting for approval")
    for name in ("tokens", "cost", "model_calls"):  # a task run that calls no model
        assert page.locator(f"[data-field={name}]").inner_text() == "–"
    gate_span = page.locator(".wf-approval")
    expect(gate_span).to_have_class(re.compile(r"\bopen\b"))
    assert "waiting for a decision" in gate_span.inner_text()
    expect(page.locator(".wf-step.open")).to_have_count(1)  # the gate step, still going
    screenshot(page, tmp_path, "dashboard-gate.png")


def test_a_rejected_gate_shows_its_reason(page: Page, scene: Scene) -> None:
    run_id = start_run(scene.server, {"task": "publish-notes", "inputs": {"title": "Draft"}})[
        "run_id"
    ]
    page.goto(f"{scene.server.url}/#/runs/{run_id}")
    page.fill(".gate-card .gate-reason", "the title is still a draft")
    page.click(".gate-card button.reject")
    expect(page.locator("[data-testid=outcome]")).to_contain_text(
        "Approval refused at approve by api:default: the title is still a draft"
    )
    line = page.locator(".tl-step[data-step=approve] .gate-line.rejected")
    expect(line).to_have_text("Rejected by api:default: the title is still a draft")
    expect(page.locator(".wf-approval .wf-meta")).to_have_text("rejected by api:default")
    wait_for(scene.server, run_id, lambda view: view["status"] == "cancelled")


def test_a_sub_agent_run_nested_under_its_call(page: Page, scene: Scene, tmp_path: Path) -> None:
    page.goto(f"{scene.server.url}/#/runs/{scene.lead}")
    nested = page.locator(f'.timeline.nested[data-run-id="{scene.child}"]')
    expect(nested).to_contain_text("the table is 42 cm")
    link = page.locator(".tl-tool .tl-child")
    expect(link).to_have_text(f"sub-agent run {scene.child} ↗")
    children = page.locator(".wf-children .wf-row")
    expect(children).to_have_count(3)  # the sub-agent's two model calls and its tool call
    assert children.locator(".wf-name").all_inner_texts() == ["call 1", "measure", "call 2"]
    surveyor = page.locator(".wf-tool", has_text="surveyor")
    assert surveyor.locator(".wf-meta").inner_text() == f"sub-agent {scene.child}"
    screenshot(
        page, tmp_path, "dashboard-subagent.png", down_to=page.locator(".tl-tool", has=nested)
    )

    link.click()
    expect(page.locator("[data-field=parent]")).to_have_text(scene.lead)
    expect(page.locator("[data-field=request]")).to_have_text("measure the table")


def test_the_form_offers_the_servers_models(page: Page, scene: Scene) -> None:
    page.goto(f"{scene.server.url}/#/new")
    options = page.locator("#offered-models option")
    expect(options).to_have_count(4)
    values = [o.get_attribute("value") for o in options.all()]
    assert values == ["local", "ollama:*", LONG_MODEL, "paced:release-notes"]
    assert page.locator(".model-hint").inner_text().startswith("Offered: local, ollama:*")
    assert page.locator("input[name=model]").get_attribute("list") == "offered-models"
