"""An HTTP model's connections are closed on the event loop that opened them: when that
loop shuts down (the end of `asyncio.run`), when the model is let go of while the loop
runs, or at `aclose()`; none is left for the garbage collector (a ResourceWarning)."""

from __future__ import annotations

import asyncio
import gc

import httpx
from model_helpers import Wire, json_reply, make_model

from loopwright.messages import Message, ModelRequest

REQUEST = ModelRequest(messages=(Message.user("What is 17 + 25?"),))
FINAL = {
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "42"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 20, "completion_tokens": 1},
}
CLOSE_LIMIT_S = 10.0


class ClosingWire(Wire):
    """A Wire whose transport says when it is closed (what closes the connections)."""

    def __init__(self, *replies: httpx.Response) -> None:
        super().__init__(*replies)
        self.closes = 0
        self.closed = asyncio.Event()
        self.transport = Closing(self)


class Closing(httpx.MockTransport):
    def __init__(self, wire: ClosingWire) -> None:
        super().__init__(wire._handle)
        self.wire = wire

    async def aclose(self) -> None:
        self.wire.closes += 1
        self.wire.closed.set()


def test_the_connections_close_when_the_event_loop_ends() -> None:
    wire = ClosingWire(json_reply(FINAL), json_reply(FINAL))
    model = make_model("openai", wire)
    assert asyncio.run(model.complete(REQUEST)).text == "42"
    assert wire.closes == 1  # closed by asyncio.run on its way out, the model still held
    assert asyncio.run(model.complete(REQUEST)).text == "42"  # a new loop: new connections
    assert wire.closes == 2


async def test_a_model_let_go_of_closes_its_connections_on_its_loop() -> None:
    wire = ClosingWire(json_reply(FINAL))
    model = make_model("openai", wire)
    assert (await model.complete(REQUEST)).text == "42"
    del model
    gc.collect()
    await asyncio.wait_for(wire.closed.wait(), CLOSE_LIMIT_S)
    assert wire.closes == 1


async def test_aclose_closes_them_and_the_next_call_opens_new_ones() -> None:
    wire = ClosingWire(json_reply(FINAL), json_reply(FINAL))
    model = make_model("openai", wire)
    assert (await model.complete(REQUEST)).text == "42"
    await model.aclose()
    assert wire.closes == 1
    assert (await model.complete(REQUEST)).text == "42"
    await model.aclose()
    assert wire.closes == 2
