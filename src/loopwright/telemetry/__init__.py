"""OpenTelemetry traces of runs, model calls and tool calls (the `otel` extra).

Off by default, and then free: nothing from `opentelemetry` is imported, and a run checks
one module global. On:

    from loopwright import telemetry
    telemetry.enable()                      # the global TracerProvider (or configure_otlp())

or `loopwright run --otel` / `loopwright serve --otel`, or `OTEL_EXPORTER_OTLP_ENDPOINT`
set in the environment of the CLI (the exporter then reads every standard `OTEL_*`
variable: endpoint, headers, protocol, service name...). See docs/telemetry.md.

Spans follow the OpenTelemetry GenAI semantic conventions: `invoke_agent` per agent run,
`chat {model}` per model call, `execute_tool {tool}` per tool call, with `gen_ai.*`
attributes; every text attribute is scrubbed with the run's scrubber.

`EventLogger` is the other way to watch a run: an event sink that writes its trace
("Thinking... Calling... Observing... Final Answer", seed 001) on the `loopwright.trace`
logger at INFO.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loopwright.telemetry._logging import EventLogger

if TYPE_CHECKING:
    from loopwright.telemetry._otel import Tracing

_OTEL_NAMES = ("Tracing",)
"""Named only when tracing is on, as they import OpenTelemetry."""


def __getattr__(name: str) -> Any:
    if name in _OTEL_NAMES:
        from loopwright.telemetry import _otel

        return getattr(_otel, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_ACTIVE: list[Tracing] = []
"""The tracing in force (at most one); empty when telemetry is off."""


def active() -> Tracing | None:
    """The tracing in force, or None (telemetry off: nothing to do)."""
    return _ACTIVE[0] if _ACTIVE else None


def enable(tracer_provider: Any = None, *, capture_content: bool = False) -> Tracing:
    """Trace every run from now on, with `tracer_provider` (default: the global one).

    `capture_content` also records tool arguments and results and the model's reply text
    (scrubbed, cut to 4,000 characters); off by default, as the conventions advise.
    """
    from loopwright.telemetry._otel import Tracing

    tracing = Tracing(tracer_provider, capture_content=capture_content)
    _ACTIVE[:] = [tracing]
    return tracing


def disable() -> None:
    """Stop tracing (spans already ended are exported as the provider was told)."""
    _ACTIVE.clear()


def configure_otlp(
    *, capture_content: bool = False, warn: Callable[[str], None] | None = None
) -> Tracing:
    """Enable tracing to an OTLP collector configured by the standard `OTEL_*` variables
    (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL` = `http/protobuf` by
    default or `grpc`, `OTEL_SERVICE_NAME`...). A collector that does not take the spans
    is said once, through `warn` (default: a warning on the `loopwright.telemetry`
    logger), not at every retry; at exit the last spans get at most 2 s."""
    from loopwright.telemetry._otel import otlp_provider

    return enable(otlp_provider(warn), capture_content=capture_content)


def wanted(flag: bool, environ: dict[str, str] | None = None) -> bool:
    """Should the CLI trace? `--otel`, or an OTLP endpoint in the environment."""
    env = os.environ if environ is None else environ
    return flag or bool(
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def trace_headers() -> dict[str, str]:
    """`traceparent` (and `tracestate`) for the current span, to send with an HTTP call;
    empty when telemetry is off."""
    tracing = active()
    return tracing.headers() if tracing is not None else {}


__all__ = [
    "EventLogger",
    "Tracing",
    "configure_otlp",
    "disable",
    "enable",
]
