"""Structured output for real: llama.cpp's OpenAI-compatible server on 127.0.0.1 (the
schema sent as `response_format`, turned into a grammar by the server) and the embedded
model (the grammar built in-process). CPU heavy: marked `model`."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from loopwright import AgentExecutor, AgentOptions
from loopwright.models import OpenAIModel, RetryPolicy, resolve_model
from model_server import LlamaServer

pytestmark = pytest.mark.model
CALL_LIMIT_S = 900
"""One call's bound on a loaded 2-core machine; the run's wall clock is set to it too (its
default, 600 s for a run without tools, cut a call at a load average of 20)."""


class Person(BaseModel):
    name: str
    age: int
    city: str


REQUEST = "Alice Martin is 34 and lives in Lyon. Extract the person."


async def test_llama_server_returns_a_valid_object(llama_server: LlamaServer) -> None:
    model = OpenAIModel(
        "qwen", base_url=llama_server.url, retry=RetryPolicy(max_retries=0), timeout=CALL_LIMIT_S
    )
    options = AgentOptions(output_retries=0, max_iterations=1, timeout_s=CALL_LIMIT_S)
    result = await AgentExecutor(model, output_type=Person, options=options).run(REQUEST)
    person = result.output_as(Person)
    assert person.age == 34 and "Lyon" in person.city and "Alice" in person.name


async def test_embedded_model_grammar_returns_a_valid_object() -> None:
    model = resolve_model("local")  # as `--model local`
    options = AgentOptions(output_retries=0, max_iterations=1, timeout_s=CALL_LIMIT_S)
    result = await AgentExecutor(model, output_type=Person, options=options).run(REQUEST)
    assert result.output_as(Person).age == 34
