"""The real `loopwright run --otel` exports its spans over OTLP/HTTP to a collector on
loopback, configured the standard way (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_helpers import cli_env, cli_process


class Collector:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, bytes]] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                collector.requests.append((self.path, self.headers["content-type"], body))
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def spans(self) -> list[tuple[str, dict[str, Any], str]]:
        out = []
        for path, _type, body in self.requests:
            if path != "/v1/traces":
                continue
            request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                service = next(
                    a.value.string_value
                    for a in resource.resource.attributes
                    if a.key == "service.name"
                )
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        attributes = {a.key: _value(a.value) for a in span.attributes}
                        out.append((span.name, attributes, service))
        return out


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


@contextmanager
def collector() -> Iterator[Collector]:
    server = Collector()
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


@pytest.mark.subprocess
def test_run_with_otel_exports_its_spans_over_otlp(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    call = {"thought": "t", "action": "add", "action_input": {"a": 2, "b": 3}}
    script.write_text(json.dumps([json.dumps(call), json.dumps({"final_answer": "5"})]))
    with collector() as otlp:
        env = cli_env(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=otlp.url, OTEL_SERVICE_NAME="lw-test")
        tools = str(Path(__file__).resolve().parents[2] / "examples" / "tools.py")
        done = cli_process(  # spans are exported when the process ends
            "run", "2 + 3?", "--model", f"scripted:{script}", "--tools", f"{tools}:add",
            "--otel", "--json", home=tmp_path, env=env,
        )  # fmt: skip
        assert done.code == 0, done.err
        spans = otlp.spans()
    assert otlp.requests and otlp.requests[0][1] == "application/x-protobuf"
    names = sorted(name for name, _attributes, _service in spans)
    assert names == ["chat " + str(script), "chat " + str(script), "execute_tool add",
                     "invoke_agent loopwright"]  # fmt: skip
    assert {service for _name, _attributes, service in spans} == {"lw-test"}
    run_id = json.loads(done.out.splitlines()[0])["run_id"]
    agent = next(a for name, a, _s in spans if name == "invoke_agent loopwright")
    assert agent["gen_ai.conversation.id"] == run_id
    assert agent["gen_ai.operation.name"] == "invoke_agent"
