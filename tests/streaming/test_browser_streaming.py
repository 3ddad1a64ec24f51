"""The dashboard in a real Chromium shows a reply while it is being written: the first
words appear in a draft row while the model still holds the rest; the complete reply's
rows replace the draft."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from typing import Literal

from playwright.sync_api import Page, expect
from server_helpers import LiveServer, live_server, make_config, start_run
from test_browser import page  # noqa: F401

from loopwright.messages import ModelRequest, ModelResponse, Usage
from loopwright.models import ModelRegistry, TextSink

pytestmark = pytest.mark.browser
FIRST = '{"thought": "Reading the question carefully, '
REST = 'then answering", "final_answer": "forty-two"}'


class HalfwayModel:
    """Once the test says `start`, streams its first words, then waits until the test
    lets it finish (deltas are live only: a page that connects later never sees them)."""

    name = "halfway"
    preferred_tool_mode: Literal["prompted"] = "prompted"

    def __init__(self) -> None:
        self.start = threading.Event()
        self.go_on = threading.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.to_thread(self.go_on.wait, 60)
        return ModelResponse(text=FIRST + REST, usage=Usage(10, 5))

    async def complete_streaming(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        await asyncio.to_thread(self.start.wait, 60)
        for word in FIRST.split(" "):
            on_text(word + " ")
        await asyncio.to_thread(self.go_on.wait, 60)
        on_text(REST)
        return ModelResponse(text=FIRST + " " + REST, usage=Usage(10, 5))


@pytest.fixture
def halfway() -> Iterator[HalfwayModel]:
    model = HalfwayModel()
    yield model
    model.start.set()
    model.go_on.set()


@pytest.fixture
def server(tmp_path: Path, halfway: HalfwayModel) -> Iterator[LiveServer]:
    models = ModelRegistry().with_factory("halfway", lambda _name, _url: halfway)
    config = make_config(tmp_path, models=models)
    config = dataclasses.replace(config, allowed_models=config.allowed_models | {"halfway:x"})
    with live_server(config) as live:
        yield live


def test_the_timeline_shows_the_reply_as_it_is_written(
    page: Page,  # noqa: F811
    server: LiveServer,
    halfway: HalfwayModel,
) -> None:
    run_id = start_run(server, {"prompt": "the answer?", "model": "halfway:x"})["run_id"]
    page.goto(f"{server.url}/#/runs/{run_id}")
    expect(page.locator("[data-field=conn]")).to_have_text("live")
    expect(page.locator(".tl-iteration")).to_have_count(1)
    halfway.start.set()
    draft = page.locator(".tl-draft .tl-draft-text")
    expect(draft).to_contain_text("Reading the question")  # while the model still holds
    expect(page.locator(".tl-answer")).to_have_count(0)
    halfway.go_on.set()
    expect(page.locator(".tl-answer")).to_contain_text("forty-two")
    expect(page.locator(".tl-draft")).to_have_count(0)
    expect(page.locator(".tl-thought")).to_contain_text("then answering")
