"""The dashboard in a real Chromium (Debian's, driven by Playwright): start runs from the
form, watch the timeline fill in live, approve a gate and see the task continue.

Set LOOPWRIGHT_SCREENSHOT=docs/dashboard.png to keep the run page's screenshot.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("playwright", reason="playwright is not installed: pip install -e '.[dev]'")
from playwright.sync_api import Browser, Page, expect
from server_helpers import (
    TOKENS,
    HeldModel,
    LiveServer,
    echo_script,
    live_server,
    make_config,
    start_run,
    tasks_folder,
    wait_finished,
    write_script,
)

from loopwright.events import Event
from loopwright.models import ModelRegistry
from loopwright.store import SqliteRunStore

pytestmark = pytest.mark.browser

TIMEOUT_MS = 20_000


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    models = ModelRegistry().with_factory("held", lambda _name, _url: HELD[-1])
    config = make_config(
        tmp_path,
        tasks_dir=tasks_folder(tmp_path),
        models=models,
        allow_models=frozenset({"held:*"}),
    )
    with live_server(config) as live:
        yield live


@pytest.fixture
def page(browser: Browser, server: LiveServer) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


HELD: list[HeldModel] = []
"""The HeldModel of the running test, for the server's `held:` model spec."""

SECRET = "AKIA" + "Z7Q4LMNB2XK9PQRS"


def agent_script(path: Path) -> str:
    """Four tool calls: an echo, a failing read, a read of a file with a secret; an answer."""
    replies = [
        {
            "thought": "Start by echoing the plan.",
            "action": "echo",
            "action_input": {"text": "plan: inspect, then report"},
        },
        {
            "thought": "Check the configuration file.",
            "action": "read",
            "action_input": {"path": "missing.cfg"},
        },
        {
            "thought": "The file is missing; read the credentials file instead.",
            "action": "read",
            "action_input": {"path": "credentials.ini"},
        },
        {
            "thought": "Confirm the summary.",
            "action": "echo",
            "action_input": {"text": "3 checks done"},
        },
        {
            "thought": "All checks are done, so I can report.",
            "final_answer": "Checked the plan and the credentials; missing.cfg does not exist.",
        },
    ]
    return write_script(path, [json.dumps(r) for r in replies])


def test_start_an_agent_run_from_the_form(page: Page, server: LiveServer, tmp_path: Path) -> None:
    spec = agent_script(tmp_path / "agent.json")
    (tmp_path / "ws" / "credentials.ini").write_text(f"[deploy]\naws_access_key_id = {SECRET}\n")
    page.goto(server.url + "/#/new")
    page.fill("textarea[name=prompt]", "Check the deployment configuration")
    page.fill("input[name=model]", spec)
    page.check("input[name=tools][value=read]")
    page.click("button[type=submit]")

    page.wait_for_url("**/#/runs/run_*")
    tools = page.locator(".tl-tool")
    outcome = page.locator("[data-testid=outcome]")
    outcome.wait_for(state="visible")
    assert "missing.cfg does not exist" in outcome.inner_text()
    assert tools.count() == 4
    assert page.locator(".tl-tool.error").count() == 1
    assert page.locator(".tl-tool.error .tl-tool-name").inner_text() == "read"
    redacted = page.locator("mark.redacted").first
    assert redacted.inner_text().startswith("[REDACTED:")
    assert SECRET not in page.content()
    assert page.locator(".tl-thought").count() == 5
    assert page.locator("[data-field=status]").inner_text() == "completed"

    shot = tmp_path / "run-page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("LOOPWRIGHT_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)

    page.click("a[data-nav=runs]")
    row = page.locator("[data-testid=run-list] tbody tr").first
    row.wait_for()
    assert "Check the deployment configuration" in row.inner_text()
    assert "completed" in row.inner_text()


def test_approve_a_gate_and_the_task_continues(
    page: Page, server: LiveServer, tmp_path: Path
) -> None:
    page.goto(server.url + "/#/new")
    page.click(".tab[data-kind=task]")
    page.select_option("select[name=task]", "publish-notes")
    page.fill("input[name='input:title']", "Release 1.4")
    page.click("button[type=submit]")

    page.wait_for_url("**/#/runs/run_*")
    gate = page.locator(".gate-card")
    gate.wait_for()
    assert "Write NOTES.md titled Release 1.4?" in gate.inner_text()
    survey = page.locator(".tl-step[data-step=survey]")
    assert "completed" in survey.inner_text()
    assert page.locator(".tl-step[data-step=write]").count() == 0
    assert page.locator("[data-field=conn]").inner_text() == "live"

    page.click(".gate-card button.approve")
    page.locator("[data-testid=outcome]").wait_for(state="visible")
    write = page.locator(".tl-step[data-step=write]")
    assert "completed" in write.inner_text()
    assert page.locator(".gate-card").count() == 0
    gate_lines = page.locator(".tl-step[data-step=approve] .gate-line").all_inner_texts()
    assert gate_lines == [
        "Approval needed: Write NOTES.md titled Release 1.4?",
        "Approved by api:default",
    ]
    assert (tmp_path / "ws" / "NOTES.md").read_text() == "Release 1.4"


def test_a_finished_task_shows_no_spinner(page: Page, server: LiveServer, tmp_path: Path) -> None:
    """A task's tool steps are closed by their results: once the task is done nothing on
    the page still spins, and each tool step's row shows its call and its result."""
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "Done"}})["run_id"]
    page.goto(f"{server.url}/#/runs/{run_id}")
    page.locator(".gate-card").wait_for()
    expect(page.locator(".running")).to_have_count(1)  # the gate, waiting
    expect(page.locator(".running .tl-status")).to_have_text("waiting for approval")
    page.click(".gate-card button.approve")
    expect(page.locator("[data-field=status]")).to_have_text("completed")
    expect(page.locator(".running")).to_have_count(0)
    assert page.locator(".tl-tool").count() == 0  # no row of its own for a step's call
    write = page.locator(".tl-step[data-step=write]")
    expect(write.locator(".tl-status")).to_have_text("completed")
    assert write.locator(".tl-args").inner_text() == '{"path":"NOTES.md","content":"Done"}'
    assert "write_file →" in write.locator(".tl-result").inner_text()


@pytest.mark.parametrize("button", ["reject", "cancel"])
def test_reject_a_gate_or_cancel_the_run(
    page: Page, server: LiveServer, tmp_path: Path, button: str
) -> None:
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "No"}})["run_id"]
    page.goto(f"{server.url}/#/runs/{run_id}")
    page.locator(".gate-card").wait_for()
    if button == "reject":
        page.click(".gate-card button.reject")
    else:
        page.click("[data-action=cancel]")
    outcome = page.locator("[data-testid=outcome]")
    expect(outcome).to_contain_text("Run cancelled")
    expect(page.locator("[data-field=status]")).to_have_text("cancelled")
    assert page.locator(".gate-card").count() == 0
    assert page.locator("[data-action=cancel]").is_hidden()
    if button == "reject":
        rejected = page.locator(".tl-step[data-step=approve] .gate-line.rejected")
        assert rejected.inner_text() == "Rejected by api:default"
    assert page.locator(".tl-step[data-step=write]").count() == 0
    assert not (tmp_path / "ws" / "NOTES.md").exists()


def test_a_token_server_asks_for_the_token(browser: Browser, tmp_path: Path) -> None:
    """The dashboard asks for a token, then shows only the tenant's runs and follows them
    live (the WebSocket carries the token as `access_token`)."""
    with live_server(make_config(tmp_path, tokens=TOKENS)) as live:
        spec = echo_script(tmp_path / "s.json", 2, answer="acme's answer")
        body = {"prompt": "acme run", "model": spec, "tools": ["echo"]}
        acme_run = start_run(live, body, {"Authorization": "Bearer acme-token-1234"})["run_id"]
        sockets: list[str] = []
        globex_body = {**body, "prompt": "globex run", "model": echo_script(tmp_path / "g.json", 0)}
        start_run(live, globex_body, {"Authorization": "Bearer globex-token-5678"})
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.on("websocket", lambda ws: sockets.append(ws.url))
        page.goto(live.url + "/")
        page.locator("#token-dialog").wait_for(state="visible")
        page.fill("#token-input", "acme-token-1234")
        page.click("#token-form button[type=submit]")
        rows = page.locator("[data-testid=run-list] tbody tr")
        expect(rows).to_have_count(1)
        assert "acme run" in rows.first.inner_text()
        expect(page.locator("#who")).to_have_text("tenant acme")
        rows.first.click()
        expect(page.locator("[data-testid=outcome]")).to_contain_text("acme's answer")
        expect(page.locator(".tl-tool.ok")).to_have_count(2)
        expect(page.locator("[data-field=conn]")).to_have_text("finished")
        assert sockets == [
            f"{live.ws_url}/api/runs/{acme_run}/ws?after=0&access_token=acme-token-1234"
        ]
        context.close()


@pytest.fixture
def held_model() -> Iterator[HeldModel]:
    model = HeldModel(calls=300)
    HELD.append(model)  # what the server's `held:` model spec gives
    yield model
    model.release(1000)  # let a run the test left behind finish


def tool_rows(page: Page, count: int) -> None:
    """Wait until the timeline shows `count` finished tool calls."""
    expect(page.locator(".tl-tool.ok")).to_have_count(count, timeout=TIMEOUT_MS)


SERVER_BOUND_S = 300.0
"""How long the server may take to run what the test released (hundreds of calls on a
loaded 2-core machine); the page's own wait (TIMEOUT_MS) starts once the server has."""


def stored(server: LiveServer, run_id: str, *, tool_calls: int = 0, ended: bool = False) -> None:
    """Wait until the server has stored `tool_calls` finished calls of the run (and its end):
    what the page is then asked to show is there to show."""
    deadline = time.monotonic() + SERVER_BOUND_S
    while True:
        reply = httpx.get(f"{server.url}/api/runs/{run_id}/events", params={"limit": 10000})
        types = [e["type"] for e in reply.json()["events"]]
        if types.count("tool_call") >= tool_calls and (not ended or "run_finished" in types):
            return
        assert time.monotonic() < deadline, f"{types.count('tool_call')} calls stored"
        time.sleep(0.2)  # polling the server's store: nothing to wait on instead


def test_a_long_run_fills_in_live_without_re_rendering(
    page: Page, server: LiveServer, held_model: HeldModel
) -> None:
    """300 tool calls (1,200+ events) arrive while the page is open; rows are appended,
    the first row is never replaced, and a dropped connection resumes from the last seq."""
    body = {"prompt": "echo 300 lines", "model": "held:x", "tools": ["echo"],
            "options": {"max_iterations": 400}}  # fmt: skip
    run_id = start_run(server, body)["run_id"]
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    page.goto(f"{server.url}/#/runs/{run_id}")
    expect(page.locator("[data-field=conn]")).to_have_text("live")
    held_model.release(1)
    tool_rows(page, 1)
    page.evaluate("window.firstRow = document.querySelector('.tl-tool')")

    held_model.release(99)
    tool_rows(page, 100)
    page.evaluate("window.loopwrightLive.ws.close(3000, 'test drops the connection')")
    held_model.release(200)  # these happen while the page is reconnecting
    stored(server, run_id, tool_calls=300)
    tool_rows(page, 300)
    expect(page.locator("[data-field=conn]")).to_have_text("live")
    held_model.release(1)
    stored(server, run_id, tool_calls=300, ended=True)
    expect(page.locator("[data-testid=outcome]")).to_contain_text("all lines echoed")

    assert page.evaluate("window.firstRow === document.querySelector('.tl-tool')")
    assert page.evaluate("window.firstRow.isConnected")
    results = page.locator(".tl-tool .tl-result").all_inner_texts()
    assert results == [f"line {n}" for n in range(1, 301)]  # in order, each once
    assert page.locator(".tl-iteration").count() == 301
    assert page.locator("[data-field=tool_calls]").inner_text() == "300"
    events = httpx.get(f"{server.url}/api/runs/{run_id}/events", params={"limit": 10000}).json()
    seqs = page.evaluate(
        "[...document.querySelectorAll('.timeline > li')].map(li => +li.dataset.seq)"
    )
    assert len(seqs) == len(set(seqs))  # no event shown twice
    assert max(seqs) == events["last_seq"]
    assert len(sockets) == 2 and sockets[0].endswith("after=0")
    resumed_after = int(sockets[1].rsplit("after=", 1)[1])
    assert resumed_after >= 400  # the second connection started from the last seq seen


def test_a_model_call_in_flight_is_an_open_span(
    page: Page, server: LiveServer, held_model: HeldModel
) -> None:
    """A slow model call is a growing bar in the waterfall while it runs (not a gap between
    two timestamps), and a closed one with its latency once the reply is in."""
    body = {"prompt": "echo", "model": "held:x", "tools": ["echo"]}
    run_id = start_run(server, body)["run_id"]
    page.goto(f"{server.url}/#/runs/{run_id}")
    waiting = page.locator(".wf-model.open")
    expect(waiting).to_have_count(1)
    expect(waiting.locator(".wf-meta")).to_have_text("waiting for the reply…")
    expect(page.locator("[data-field=status]")).to_have_text("running")
    held_model.release(1)
    first = page.locator(".wf-model").first
    expect(first.locator(".wf-meta")).to_have_text("10 → 5 tokens")
    expect(first).not_to_have_class(re.compile(r"\bopen\b"))
    expect(page.locator(".wf-model.open")).to_have_count(1)  # the next call, in flight
    held_model.release(300)
    expect(page.locator("[data-testid=outcome]")).to_contain_text("Run stopped")  # 10 rounds
    expect(page.locator(".wf-row.open")).to_have_count(0)


def test_an_interrupted_run_shows_its_last_call_unfinished(
    browser: Browser, tmp_path: Path
) -> None:
    """A run whose process died during a model call: the call has no reply, and nothing
    on the page pretends it is still going."""
    spec = echo_script(tmp_path / "s.json", 2)
    with live_server(make_config(tmp_path)) as live:
        run_id = start_run(live, {"prompt": "p", "model": spec, "tools": ["echo"]})["run_id"]
        events = wait_events(live, run_id)
    last_start = [e for e in events if e.type == "iteration_started"][-1]
    store = SqliteRunStore(tmp_path / "crashed.db")  # the process died during that call
    store.append_many([e for e in events if e.seq <= last_start.seq])
    with live_server(make_config(tmp_path, store=store)) as live:
        page = browser.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"{live.url}/#/runs/{run_id}")
        expect(page.locator("[data-field=status]")).to_have_text("interrupted")
        expect(page.locator(".wf-model")).to_have_count(3)
        last = page.locator(".wf-model").last
        expect(last).to_have_class(re.compile(r"\bunfinished\b"))
        assert page.locator(".wf-row.open").count() == 0
        assert page.locator(".running").count() == 0
        page.close()


def wait_events(server: LiveServer, run_id: str) -> list[Event]:
    """The finished run's events, as the store holds them."""
    wait_finished(server, run_id)
    events: list[Event] = server.config.runtime.store.events(run_id)
    return events


def test_run_text_is_shown_as_text_never_as_html(
    page: Page, server: LiveServer, tmp_path: Path
) -> None:
    html = '<img src=x onerror="window.pwned = 1">'
    replies = [
        json.dumps(
            {"thought": f"thinking {html}", "action": "echo", "action_input": {"text": html}}
        ),
        json.dumps({"thought": "done", "final_answer": f"answer {html}"}),
    ]
    spec = write_script(tmp_path / "html.json", replies)
    run_id = start_run(server, {"prompt": f"request {html}", "model": spec, "tools": ["echo"]})[
        "run_id"
    ]
    page.goto(f"{server.url}/#/runs/{run_id}")
    expect(page.locator("[data-testid=outcome]")).to_contain_text(f"answer {html}")
    expect(page.locator(".tl-tool .tl-result")).to_have_text(html)
    assert page.locator("[data-field=request]").inner_text() == f"request {html}"
    assert page.locator("main img").count() == 0
    page.goto(f"{server.url}/#/")
    expect(page.locator("[data-testid=run-list] tbody tr")).to_have_count(1)
    assert page.locator("main img").count() == 0
    assert page.evaluate("window.pwned") is None


def test_falls_back_to_sse_when_websockets_carry_nothing(
    page: Page, server: LiveServer, held_model: HeldModel
) -> None:
    """Behind something that lets WebSockets open but drops them (here: Playwright closes
    every one at once), the run page follows the run over Server-Sent Events instead."""
    page.route_web_socket("**/ws*", lambda ws: ws.close(code=1011, reason="proxy says no"))
    streams: list[str] = []
    page.on(
        "request", lambda request: streams.append(request.url) if "/events" in request.url else None
    )
    body = {
        "prompt": "echo",
        "model": "held:x",
        "tools": ["echo"],
        "options": {"max_iterations": 400},
    }
    run_id = start_run(server, body)["run_id"]
    page.goto(f"{server.url}/#/runs/{run_id}")
    expect(page.locator("[data-field=conn]")).to_have_text("live (SSE)")
    held_model.release(5)
    tool_rows(page, 5)
    held_model.release(296)
    stored(server, run_id, tool_calls=300, ended=True)
    expect(page.locator("[data-testid=outcome]")).to_contain_text("all lines echoed")
    expect(page.locator("[data-field=conn]")).to_have_text("finished")
    results = page.locator(".tl-tool .tl-result").all_inner_texts()
    assert results == [f"line {n}" for n in range(1, 301)]
    assert streams == [f"{server.url}/api/runs/{run_id}/events?after=0"]
