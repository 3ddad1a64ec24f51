"""`loopwright run --output-schema FILE.json` through the real command, and the schema each
HTTP adapter sends to constrain the model's output."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_helpers import cli

from loopwright import AgentExecutor, AgentOptions
from loopwright.messages import ModelRequest
from loopwright.models import OllamaModel, OpenAIModel
from loopwright.testing import ScriptedModel

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
}


def _script(tmp_path: Path, *answers: object) -> Path:
    script = tmp_path / "script.json"
    replies = [json.dumps({"thought": "t", "final_answer": a}) for a in answers]
    script.write_text(json.dumps(replies))
    return script


def test_cli_prints_the_validated_value_as_json_on_stdout(tmp_path: Path) -> None:
    schema = tmp_path / "city.json"
    schema.write_text(json.dumps(SCHEMA))
    script = _script(tmp_path, {"city": "Oslo"}, {"city": "Oslo", "population": 700000})
    run = cli("run", "a city", "--model", f"scripted:{script}", "--output-schema", str(schema),
              home=tmp_path)  # fmt: skip
    assert run.code == 0, run.err
    assert json.loads(run.out) == {"city": "Oslo", "population": 700000}
    assert "answer does not match" in run.err  # the live view (stderr) showed the retry
    [record] = json.loads(cli("runs", "list", "--json", home=tmp_path).out)
    shown = cli("runs", "show", record["run_id"], "--json", home=tmp_path)
    events = [json.loads(line) for line in shown.out.splitlines()]
    assert [e["type"] for e in events].count("output_invalid") == 1
    spec = events[0].get("spec") or events[0]["options"]["extra"]["spec"]
    assert spec["output_schema"] == SCHEMA


def test_cli_fails_when_the_answer_never_validates(tmp_path: Path) -> None:
    schema = tmp_path / "city.json"
    schema.write_text(json.dumps(SCHEMA))
    script = _script(tmp_path, {"city": 1}, {"city": 2})
    run = cli("run", "a city", "--model", f"scripted:{script}", "--output-schema", str(schema),
              home=tmp_path)  # fmt: skip
    assert run.code == 1 and run.out == ""
    assert "OutputValidationError" in run.err


def test_cli_names_the_bad_schema_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "type": "object",\n  "properties": {,}\n}')
    run = cli("run", "x", "--model", "scripted:none.json", "--output-schema", str(broken),
              home=tmp_path)  # fmt: skip
    assert run.code != 0 and f"{broken}:3:" in run.err
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps({"type": "whatever"}))
    run = cli("run", "x", "--output-schema", str(invalid), home=tmp_path)
    assert run.code != 0 and "not a valid JSON Schema" in run.err and str(invalid) in run.err


def _request() -> ModelRequest:
    """A request with the reply schema an agent with `--output-schema SCHEMA` sends."""
    model = ScriptedModel(['{"thought": "t", "final_answer": "?"}'])
    options = AgentOptions(output_retries=0, max_iterations=1)
    AgentExecutor(model, output_type=SCHEMA, options=options).run_sync("hi")
    return model.requests[0]


def test_openai_sends_json_schema_and_llama_servers_get_json_object() -> None:
    official = OpenAIModel("gpt-4.1-mini", api_key="sk-test")
    body = official.request_body(_request(), stream=False)
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == [
        "thought",
        "final_answer",
    ]
    local = OpenAIModel("qwen", base_url="http://127.0.0.1:9/v1")
    body = local.request_body(_request(), stream=False)
    assert body["response_format"]["type"] == "json_object"
    assert body["response_format"]["schema"]["properties"]["final_answer"] == SCHEMA


def test_ollama_sends_the_schema_as_format() -> None:
    model = OllamaModel("qwen3:8b", base_url="http://127.0.0.1:11434", tool_mode="prompted")
    body = model.request_body(_request(), stream=False)
    assert body["format"]["properties"]["final_answer"] == SCHEMA


@pytest.mark.subprocess
def test_example_extracts_an_invoice() -> None:
    import subprocess

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "examples" / "structured_output.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "sent back: final_answer.currency: Field required",
        "invoice 2024-17 from Acme Tools: 1250.50 EUR",
    ]
