"""OpenTelemetry: a span per run, model call and tool call (GenAI semantic conventions).

    pip install 'loopwright[otel]'
    python examples/telemetry.py                 # prints the span tree
    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 loopwright run "..." --otel   # a collector

Here the spans go to the SDK's in-memory exporter and are printed as a tree with their
main attributes. A real deployment calls `telemetry.configure_otlp()` (or passes `--otel`
to the CLI) and the spans go to any OTLP collector: Jaeger, Tempo, Honeycomb, Langfuse...
"""

from __future__ import annotations

import json

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from loopwright import AgentExecutor, telemetry, tool
from loopwright.testing import ScriptedModel

SHOWN = ("gen_ai.request.model", "gen_ai.tool.name", "gen_ai.usage.output_tokens")


@tool(effect="read")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def show(spans: list[ReadableSpan], parent: int | None = None, depth: int = 0) -> None:
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        if (span.parent.span_id if span.parent else None) != parent:
            continue
        attributes = span.attributes or {}
        details = ", ".join(f"{k}={attributes[k]}" for k in SHOWN if k in attributes)
        print(f"{'  ' * depth}{span.name} [{details}]")
        show(spans, span.context.span_id, depth + 1)


def main() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.enable(provider)
    replies = [
        json.dumps({"thought": "add", "action": "add", "action_input": {"a": 17, "b": 25}}),
        json.dumps({"thought": "done", "final_answer": "42"}),
    ]
    result = AgentExecutor(ScriptedModel(replies, name="scripted:calc"), [add]).run_sync("17+25?")
    print(f"answer: {result.answer}")
    show(list(exporter.get_finished_spans()))


if __name__ == "__main__":
    main()
