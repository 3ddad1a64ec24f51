"""LiveEffects: perform each effect in this process; its result is logged by the loop."""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Callable

from loopwright.clock import Clock, SystemClock
from loopwright.effects._deltas import DEFAULT_DELTAS, DeltaSettings, streamed_call
from loopwright.effects._log import EventLog
from loopwright.effects._protocol import (
    Gatekeeper,
    GateRequest,
    GateVerdict,
    ToolInvocation,
    Verification,
    VerificationResult,
)
from loopwright.errors import LoopwrightError, ModelAdapterError
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model, StreamsText
from loopwright.models._phase import ModelCallOf
from loopwright.safety.scrub import Scrubber
from loopwright.tools._deadline import run_with_timeout

log = logging.getLogger("loopwright.models")


class _NoGates:
    """Without a gatekeeper nobody can approve: every gate is rejected (the safe default)."""

    async def decide(self, run_id: str, request: GateRequest) -> GateVerdict:
        return GateVerdict("rejected", "nobody", "no one can decide gates for this run")

    def resolve(self, request_id: str, approved: bool, decided_by: str, reason: str = "") -> bool:
        return False


NO_GATES = _NoGates()
"""It holds nothing: one for every run without a gatekeeper."""


class LiveEffects:
    """Calls the model and the tools for real, asks the gatekeeper, reads the clock."""

    def __init__(
        self,
        log: EventLog,
        *,
        clock: Clock | None = None,
        gates: Gatekeeper | None = None,
        deltas: DeltaSettings | None = DEFAULT_DELTAS,
        listened: Callable[[], bool] | None = None,
    ) -> None:
        self.log = log
        self.gates: Gatekeeper = gates or NO_GATES
        system = clock is None or type(clock) is SystemClock
        self.monotonic: Callable[[], float] = time.monotonic if system else clock.monotonic  # type: ignore[union-attr]
        self._time: Callable[[], float] = time.time if system else clock.time  # type: ignore[union-attr]
        self.deltas = deltas
        """Token streaming to the log's sink (None: never stream; replies come whole)."""
        self.listened = listened
        """Whether someone follows the run right now: deltas are sent only then (None:
        always, to the log's sink)."""

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        """The model's reply. When someone listens to the run (the log has a sink) and the
        model streams, its text goes out as `model_text_delta` events on the way. (Asked of
        the model's class: `issubclass` on a protocol is remembered by the class, while
        `isinstance` checks every member again.)"""
        deltas = self.deltas
        if (
            deltas is not None
            and self.log.sink is not None
            and issubclass(type(model), StreamsText)
        ):
            call = streamed_call(
                model, request, self.log, deltas, self.monotonic, self._time, self.listened
            )
        else:
            call = model.complete(request)
        try:
            with ModelCallOf(self.log.run_id):  # its phases are this run's (the dashboard)
                return await (call if timeout is None else run_with_timeout(call, timeout))
        except (LoopwrightError, TimeoutError):
            raise
        except Exception as exc:  # a bug in the model's code: the run fails with it
            raise adapter_error(model, exc, self.log.scrubber) from exc

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        if not idempotent and self.log.recorder is not None:
            await self.log.flush()  # its tool_call_started is durable before the effect
        if timeout is None:  # the tool's own limit applies (in the executor)
            return await invoke(call)
        return await run_with_timeout(invoke(call), timeout)

    async def gate(self, request: GateRequest) -> GateVerdict:
        try:
            async with asyncio.timeout(request.timeout_s):
                return await self.gates.decide(self.log.run_id, request)
        except TimeoutError:
            return GateVerdict("timed_out", "timeout", f"no decision within {request.timeout_s:g}s")

    async def verify(self, check: Verification) -> VerificationResult:
        return await check()


def adapter_error(model: Model, exc: Exception, scrubber: Scrubber | None) -> ModelAdapterError:
    """What the model's own code raised, as the run's failure (its class and text,
    scrubbed), logged at ERROR with its traceback so a bug in your code stays in sight."""
    name = getattr(model, "name", "") or type(model).__name__
    clean = scrubber or Scrubber.default()
    text = clean.scrub(f"{type(exc).__name__}: {exc}").text
    trace = clean.scrub("".join(traceback.format_exception(exc))).text
    log.error("the model %s raised %s (the run fails with it)\n%s", name, text, trace.rstrip())
    return ModelAdapterError(
        f"the model {name} raised {text}", error_type=type(exc).__name__, provider=name
    )
