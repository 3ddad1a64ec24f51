"""The dashboard names the phases of an embedded model's call (loading the model, waiting
for it, evaluating the prompt, generating) as spans under the call, and in the call's
details with their speeds, in a real Chromium."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

pytest.importorskip("playwright", reason="playwright is not installed: pip install -e '.[dev]'")
from playwright.sync_api import Browser, Page, expect
from server_helpers import LiveServer, live_server, make_config, start_run, wait_finished

from loopwright.messages import ModelRequest, ModelResponse, ModelTimings, Usage
from loopwright.models import ModelPhase, ModelRegistry
from loopwright.models._phase import report

pytestmark = pytest.mark.browser
FIRST = ModelTimings(load_ms=300.0, prompt_ms=400.0, generate_ms=500.0, threads=2)
SECOND = ModelTimings(wait_ms=200.0, prompt_ms=100.0, generate_ms=400.0, threads=1)


class PhasedModel:
    """Takes as long as its replies' timings say, and reports them, as the embedded model's
    calls do."""

    preferred_tool_mode: Literal["prompted"] = "prompted"
    name = "phased:local"

    def __init__(self) -> None:
        act = json.dumps({"thought": "Echo it.", "action": "echo", "action_input": {"text": "hi"}})
        done = json.dumps({"thought": "Done.", "final_answer": "hi"})
        self.replies = [(act, FIRST), (done, SECOND)]

    async def complete(self, request: ModelRequest) -> ModelResponse:
        text, timings = self.replies.pop(0)
        spent = timings.load_ms + timings.wait_ms + timings.prompt_ms + timings.generate_ms
        await asyncio.sleep(spent / 1000)
        return ModelResponse(text=text, usage=Usage(600, 20, 400), model=self.name,
                             finish_reason="stop", timings=timings)  # fmt: skip


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    models = ModelRegistry().with_factory("phased", lambda _name, _url: PhasedModel())
    config = make_config(tmp_path, models=models, allow_models=frozenset({"phased:local"}))
    with live_server(config) as started:
        yield started


def test_each_call_shows_its_phases(browser: Browser, server: LiveServer) -> None:
    run_id = start_run(server, {"prompt": "Say hi", "model": "phased:local", "tools": ["echo"]})[
        "run_id"
    ]
    wait_finished(server, run_id)
    page: Page = browser.new_page()
    try:
        page.goto(f"{server.url}/#/runs/{run_id}")
        expect(page.locator(".wf-model")).to_have_count(2)
        phases = page.locator(".wf-phase")
        expect(phases).to_have_count(6)
        names = phases.locator(".wf-name").all_text_contents()
        assert names == [
            "loading the model", "evaluating the prompt", "generating",
            "waiting for the model", "evaluating the prompt", "generating",
        ]  # fmt: skip
        durations = phases.locator(".wf-dur").all_text_contents()
        assert durations[:3] == ["300 ms", "400 ms", "500 ms"], durations

        page.locator(".wf-model").first.click()
        detail = page.locator(".wf-detail .call-detail")
        facts = dict(zip(detail.locator(".call-facts dt").all_text_contents(),
                         detail.locator(".call-facts dd").all_text_contents(), strict=True))  # fmt: skip
        assert facts["Loading the model"] == "300 ms"
        # 200 prompt tokens evaluated (600, 400 of them cached) in 0.4 s; 20 out in 0.5 s
        assert re.fullmatch(r"400 ms \(500\.0 tokens/s\)", facts["Evaluating the prompt"])
        assert re.fullmatch(r"500 ms \(40\.0 tokens/s\)", facts["Generating"])
        assert facts["Threads"] == "2"
    finally:
        page.close()


class LoadingModel:
    """Reports the phases an embedded model's first call goes through, as it does (from its
    thread, into the loop that made the call), and stays in each until the test moves on."""

    preferred_tool_mode: Literal["prompted"] = "prompted"
    name = "loading:local"

    def __init__(self) -> None:
        self.loaded = threading.Event()
        self.generated = threading.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        loop = asyncio.get_running_loop()

        def load_and_generate() -> None:
            loop.call_soon_threadsafe(report, ModelPhase(self.name, "loading"))
            assert self.loaded.wait(30)
            loop.call_soon_threadsafe(report, ModelPhase(self.name, "generating", "2 threads"))
            assert self.generated.wait(30)

        await asyncio.to_thread(load_and_generate)
        text = json.dumps({"thought": "Done.", "final_answer": "hi"})
        return ModelResponse(text=text, usage=Usage(60, 10), model=self.name, finish_reason="stop")


def test_the_live_line_says_the_model_is_loading(browser: Browser, tmp_path: Path) -> None:
    """While the first call loads the model, the run page's model call says so (not
    "waiting for the reply"), then names the next phase, then shows the reply's tokens."""
    model = LoadingModel()
    models = ModelRegistry().with_factory("loading", lambda _name, _url: model)
    config = make_config(tmp_path, models=models, allow_models=frozenset({"loading:local"}))
    with live_server(config) as server:
        run_id = start_run(server, {"prompt": "Say hi", "model": "loading:local"})["run_id"]
        page: Page = browser.new_page()
        try:
            page.goto(f"{server.url}/#/runs/{run_id}")
            call = page.locator(".wf-model .wf-meta")
            expect(call).to_have_text("loading the model")
            model.loaded.set()
            expect(call).to_have_text("generating: 2 threads")
            model.generated.set()
            expect(call).to_have_text(re.compile(r"tokens$"))
            wait_finished(server, run_id)
        finally:
            model.loaded.set()
            model.generated.set()
            page.close()
