"""`--otel` with no collector: one warning line, and the process exits within a small
bound of its run's end (was: three SDK retry messages and 8 s more)."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from loopwright._ports import server_port
from loopwright.telemetry._export import EXIT_FLUSH_S, GuardedExporter, bounded_shutdown
from loopwright.telemetry._otel import otlp_provider

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_helpers import cli_env

EXIT_BOUND_S = EXIT_FLUSH_S + 2.0
"""The flush at exit, plus room for a loaded machine. The SDK's retries alone took 5.6 s
at the least (backoffs of 1, 2 and 4 s, less 20 % jitter)."""


def closed_port() -> int:
    """A port nobody listens on: drawn where no other program's port-0 listener lands."""
    return server_port()


@pytest.mark.subprocess
def test_run_with_otel_and_no_collector_warns_once_and_exits_promptly(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([json.dumps({"thought": "t", "final_answer": "ok"})]))
    endpoint = f"http://127.0.0.1:{closed_port()}"
    env = cli_env(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    argv = [sys.executable, "-m", "loopwright", "run", "x", "--model", f"scripted:{script}",
            "--otel", "--json"]  # fmt: skip
    process = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    with process:
        assert process.stdout is not None and process.stderr is not None
        finished_at = None
        for line in process.stdout:
            if json.loads(line)["type"] == "run_finished":
                finished_at = time.monotonic()
        code = process.wait(timeout=60)
        exit_after = time.monotonic() - (finished_at or 0)
        err = process.stderr.read()
    assert code == 0 and finished_at is not None
    assert exit_after < EXIT_BOUND_S, f"exited {exit_after:.1f} s after the run finished"
    assert err.splitlines() == [
        f"loopwright: warning: OpenTelemetry: traces are not sent to {endpoint}/v1/traces: "
        "nothing answers there (is the collector running?); set OTEL_EXPORTER_OTLP_ENDPOINT "
        "to your collector, or drop --otel"
    ]


def test_the_python_api_says_it_once_through_its_warn_function(tmp_path: Path) -> None:
    said: list[str] = []
    old = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{closed_port()}"
    try:
        provider: TracerProvider = otlp_provider(said.append)
    finally:
        if old is None:
            del os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
        else:
            os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = old
    atexit.unregister(bounded_shutdown)  # shut here, timed
    processor = provider._active_span_processor._span_processors[0]
    exporter = processor.span_exporter  # type: ignore[attr-defined]
    assert isinstance(exporter, GuardedExporter)
    tracer = provider.get_tracer("test")
    for name in ("one", "two", "three"):
        with tracer.start_as_current_span(name):
            pass
    started = time.monotonic()
    bounded_shutdown(provider, exporter, EXIT_FLUSH_S)
    assert time.monotonic() - started < EXIT_BOUND_S
    assert len(said) == 1 and "nothing answers there" in said[0]
