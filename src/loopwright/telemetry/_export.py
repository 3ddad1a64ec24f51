"""Sending spans to an OTLP collector that may not be there: one warning, a bounded exit.

The OpenTelemetry SDK's exporter retries a failed batch with backoff until its timeout
(10 s by default) and logs each attempt ("Transient error ... retrying in 1.11s"); at the
process's exit the last batch is flushed the same way, so a run with `--otel` and no
collector printed three such lines and exited 8 s late. Here the exporter's log records are
taken in and said once, in one line naming the collector, and the flush at exit waits at
most `EXIT_FLUSH_S` before the exporter is shut (which ends its retries).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

EXIT_FLUSH_S = 2.0
"""At most this long, at exit, for the spans not sent yet; then they are dropped."""

EXPORT_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "opentelemetry.sdk._shared_internal",
)
"""Where the SDK's exporters and batch processor log a failed export."""

_UNREACHABLE = ("Connection refused", "Failed to establish", "NewConnectionError", "UNAVAILABLE")

Warn = Callable[[str], None]


def collector_endpoint(protocol: str, environ: dict[str, str] | None = None) -> str:
    """The collector the exporter sends to, as the standard variables say."""
    env = os.environ if environ is None else environ
    traces = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if traces:
        return traces
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if protocol == "grpc":
        return base or "http://localhost:4317"
    return f"{(base or 'http://localhost:4318').rstrip('/')}/v1/traces"


def log_warning(message: str) -> None:
    logging.getLogger("loopwright.telemetry").warning(message)


class GuardedExporter(SpanExporter):
    """`inner`, whose failures are said once (through `warn`) instead of logged per retry."""

    def __init__(self, inner: SpanExporter, endpoint: str, warn: Warn = log_warning) -> None:
        self.inner = inner
        self.endpoint = endpoint
        self.warn = warn
        self.warned = False
        self.closed = False
        self.finished = False
        """The provider's shutdown is over (see `bounded_shutdown`)."""
        self._lock = threading.Lock()
        self.changed = threading.Condition()
        """Notified when the exporter warns and when the shutdown is over."""
        _EXPORT_LOG.guard = self
        for name in EXPORT_LOGGERS:
            logging.getLogger(name).addFilter(_EXPORT_LOG)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.closed:
            return SpanExportResult.FAILURE
        result = self.inner.export(spans)
        if result is not SpanExportResult.SUCCESS:
            self.failed("the collector did not take them")
        return result

    def failed(self, detail: str) -> None:
        """Say, once, that spans are not reaching the collector."""
        with self._lock:
            if self.warned:
                return
            self.warned = True
        if any(sign in detail for sign in _UNREACHABLE):
            detail = "nothing answers there (is the collector running?)"
        self.warn(
            f"OpenTelemetry: traces are not sent to {self.endpoint}: {detail[:200]}; "
            "set OTEL_EXPORTER_OTLP_ENDPOINT to your collector, or drop --otel"
        )
        with self.changed:
            self.changed.notify_all()

    def shutdown(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
        self.inner.shutdown()  # ends a retry that is waiting

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class _ExportLog(logging.Filter):
    """Takes the exporters' records in: the guarded exporter says the first one its way."""

    guard: GuardedExporter | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        guard = self.guard
        if guard is None:
            return True
        if record.levelno >= logging.WARNING:
            guard.failed(record.getMessage())
        return False


_EXPORT_LOG = _ExportLog()


def bounded_shutdown(provider: Any, exporter: GuardedExporter, bound_s: float) -> None:
    """`provider.shutdown()` (the last batch flushed), waiting at most about `bound_s`, and
    no longer once the collector is known not to take spans: then the exporter is shut,
    which ends its retries, and what was not sent is dropped."""

    def shut() -> None:
        try:
            provider.shutdown()
        finally:
            with exporter.changed:
                exporter.finished = True
                exporter.changed.notify_all()

    thread = threading.Thread(target=shut, name="loopwright-otel-exit", daemon=True)
    thread.start()
    with exporter.changed:
        exporter.changed.wait_for(lambda: exporter.finished or exporter.warned, bound_s)
    if thread.is_alive():
        exporter.shutdown()
        thread.join(bound_s)
