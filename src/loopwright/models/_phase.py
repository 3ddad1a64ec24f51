"""What the embedded model is doing during a call, for whoever shows it (the CLI).

A call of the embedded model goes through phases that can each take long: loading the
model (1.1 GB), waiting for its turn while another run uses it, evaluating the prompt,
generating. The model reports each as it starts, to the listeners set with
`on_model_phase`, in the event loop that made the call (the CLI's live view says "loading
the model" and the like). Nothing is stored: how long each phase took is in the reply's
`timings` (`model_response` events), read by `runs show` and the dashboard.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Literal

Phase = Literal["loading", "waiting", "prompt", "generating"]
PHASE_NAMES: dict[Phase, str] = {
    "loading": "loading the model",
    "waiting": "waiting for the model",
    "prompt": "evaluating the prompt",
    "generating": "generating",
}


@dataclass(frozen=True)
class ModelPhase:
    """A model call entered `phase`; `detail` says more (what it waits for, the threads)."""

    model: str
    phase: Phase
    detail: str = ""

    @property
    def text(self) -> str:
        """`loading the model`, `waiting for the model: pid 1234 (loopwright eval ...)`."""
        name = PHASE_NAMES[self.phase]
        return f"{name}: {self.detail}" if self.detail else name


PhaseListener = Callable[[ModelPhase], None]
LISTENERS: list[PhaseListener] = []


def on_model_phase(listener: PhaseListener | None) -> None:
    """Be told of each phase of the embedded model's calls in this process (None: stop).
    One listener at a time; it is called in the event loop thread that made the call."""
    LISTENERS.clear()
    if listener is not None:
        LISTENERS.append(listener)


RunPhaseListener = Callable[[str, "ModelPhase | None"], None]
"""(run id, phase); None: the run's model call ended."""
RUN_LISTENERS: list[RunPhaseListener] = []
CALL_RUN: ContextVar[str | None] = ContextVar("loopwright_phase_run", default=None)
"""The run whose model call is in progress in this task (a model is shared by runs)."""


def on_run_model_phase(listener: RunPhaseListener) -> Callable[[], None]:
    """Be told of each phase with the run it belongs to, as long as the process runs (the
    dashboard's live view); returns what stops it. Several may listen."""
    RUN_LISTENERS.append(listener)
    return lambda: RUN_LISTENERS.remove(listener)


class ModelCallOf:
    """`with ModelCallOf(run_id):` the phases reported in the block (and the tasks and threads
    it starts) are the run's.

    A plain context manager, not a generator's: it wraps every model call of every run."""

    __slots__ = ("_token", "run_id")

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._token: Token[str | None] | None = None

    def __enter__(self) -> None:
        self._token = CALL_RUN.set(self.run_id)

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            CALL_RUN.reset(self._token)
        for listener in list(RUN_LISTENERS):
            listener(self.run_id, None)


def report(phase: ModelPhase) -> None:
    for listener in list(LISTENERS):
        listener(phase)
    run_id = CALL_RUN.get()
    if run_id is not None:
        for run_listener in list(RUN_LISTENERS):
            run_listener(run_id, phase)
