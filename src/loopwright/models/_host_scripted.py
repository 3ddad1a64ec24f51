"""A model host serving a ScriptedModel: the test double standing in for the LLM where a
program's tests need the host itself (its start, reuse, idle stop, faults) without the
cost of a real model. Its replies are the script's, in order, whoever asks."""

from __future__ import annotations

import asyncio

from loopwright.messages import Message, ModelRequest, ModelResponse, ModelTimings
from loopwright.models._llama_engine import CallControl, CallRequest
from loopwright.models._scripted import ScriptedModel
from loopwright.models._turn import turn


class ScriptedEngine:
    def __init__(self, file: str) -> None:
        self.model = ScriptedModel.from_file(file, strict=False, stream_chars=4)
        self._loaded = False

    @property
    def loaded(self) -> bool:
        return self._loaded

    def load(self) -> float:
        self._loaded = True
        return 0.0

    def complete(self, request: CallRequest, control: CallControl) -> ModelResponse:
        waiting = lambda who: control.on_phase("waiting", who)  # noqa: E731
        with turn(waiting, control.should_stop, control.what):
            control.on_phase("prompt", "")
            asked = ModelRequest(
                messages=tuple(Message.from_dict(m) for m in request.messages),
                stop_at_action=request.stop_at_action,
                calls_in_a_row=request.calls_in_a_row,
            )
            if request.streamed and control.on_text is not None:
                call = self.model.complete_streaming(asked, control.on_text)
            else:
                call = self.model.complete(asked)
            reply = asyncio.run(call)
        return ModelResponse(
            text=reply.text,
            tool_calls=reply.tool_calls,
            usage=reply.usage,
            finish_reason=reply.finish_reason,
            timings=ModelTimings(threads=1),
        )
