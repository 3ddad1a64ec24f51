"""The OpenTelemetry side: spans and attributes (imported only when tracing is enabled).

Names and attributes follow the OpenTelemetry GenAI semantic conventions:

    invoke_agent loopwright     gen_ai.operation.name=invoke_agent, gen_ai.agent.name,
                                gen_ai.request.model, gen_ai.conversation.id (the run id),
                                gen_ai.usage.input_tokens / output_tokens (the run's totals)
    chat {model}  (CLIENT)      gen_ai.operation.name=chat, gen_ai.provider.name,
                                gen_ai.request.model, gen_ai.request.temperature /
                                max_tokens, gen_ai.response.model,
                                gen_ai.response.finish_reasons, gen_ai.usage.*
    execute_tool {tool}         gen_ai.operation.name=execute_tool, gen_ai.tool.name,
                                gen_ai.tool.call.id, gen_ai.tool.type=function
    task {name}                 a task run (loopwright.*); its steps' tool calls and agent
                                runs are its children

A failure sets the span's status to ERROR with `error.type`; exception messages and every
text attribute pass through the run's scrubber first (exceptions are not recorded as span
events, which would carry them unscrubbed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from loopwright.safety.scrub import Scrubber
from loopwright.telemetry._export import (
    EXIT_FLUSH_S,
    GuardedExporter,
    Warn,
    bounded_shutdown,
    collector_endpoint,
    log_warning,
)

CONTENT_CHARS = 4000
AGENT_NAME = "loopwright"


def otlp_provider(warn: Warn | None = None) -> Any:
    """A TracerProvider exporting to OTLP as the standard `OTEL_*` variables say. A
    collector that does not answer is said once (`warn`, default: the `loopwright.telemetry`
    logger), and the process's exit waits at most `EXIT_FLUSH_S` for the last spans."""
    import atexit
    import os

    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    exporter: Any
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )

        exporter = HttpExporter()
    guarded = GuardedExporter(
        exporter, collector_endpoint(protocol), warn if warn is not None else log_warning
    )
    service = os.environ.get("OTEL_SERVICE_NAME", "loopwright")
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(guarded))
    atexit.register(bounded_shutdown, provider, guarded, EXIT_FLUSH_S)  # the last spans
    return provider


def provider_and_model(spec: str) -> tuple[str, str]:
    """`openai:gpt-4.1` -> ("openai", "gpt-4.1"); `local` -> ("local", "local")."""
    provider, _, name = spec.partition(":")
    return provider, name or spec


class Tracing:
    """Makes loopwright's spans with one tracer."""

    def __init__(self, tracer_provider: Any = None, *, capture_content: bool = False) -> None:
        provider = tracer_provider or trace.get_tracer_provider()
        self.tracer = provider.get_tracer("loopwright")
        self.capture_content = capture_content

    def headers(self) -> dict[str, str]:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        return carrier

    @contextmanager
    def span(
        self,
        name: str,
        attributes: dict[str, Any],
        scrubber: Scrubber | None,
        kind: SpanKind = SpanKind.INTERNAL,
    ) -> Iterator[Span]:
        """A current span; an exception leaving it sets ERROR with its scrubbed message."""
        with self.tracer.start_as_current_span(
            scrubbed(scrubber, name),
            kind=kind,
            attributes=clean(scrubber, attributes),
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield span
            except BaseException as exc:
                failed(span, scrubber, type(exc).__name__, str(exc) or type(exc).__name__)
                raise

    def content(self, scrubber: Scrubber | None, value: Any) -> str | None:
        """`value` as text for a content attribute, when content is captured."""
        if not self.capture_content:
            return None
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        return scrubbed(scrubber, text[:CONTENT_CHARS])


def scrubbed(scrubber: Scrubber | None, text: str) -> str:
    return scrubber.scrub(text).text if scrubber is not None and text else text


def clean(scrubber: Scrubber | None, attributes: dict[str, Any]) -> dict[str, Any]:
    """Attributes without None values, every string scrubbed."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, str):
            value = scrubbed(scrubber, value)
        elif isinstance(value, list | tuple):
            value = [scrubbed(scrubber, v) if isinstance(v, str) else v for v in value]
        out[key] = value
    return out


def failed(span: Span, scrubber: Scrubber | None, error_type: str, message: str) -> None:
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, scrubbed(scrubber, message)[:500]))
