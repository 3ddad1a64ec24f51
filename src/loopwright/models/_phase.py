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


def report(phase: ModelPhase) -> None:
    for listener in list(LISTENERS):
        listener(phase)
