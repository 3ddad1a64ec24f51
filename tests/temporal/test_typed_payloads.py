"""Typed values through Temporal, each the same JSON object on the wire as before it was
typed (recorded histories replay): the decision a workflow takes (the Update `approve`, the
Signal `approve_later`: one dataclass, made and read in one place, a malformed one refused
with what is wrong) and a model call's result; every payload dataclass written by a worker
as the JSON Temporal's own converter writes, and read back by the same rules."""

from __future__ import annotations

import json
import re
import typing
from typing import Any

import pytest
from temporal_helpers import worker_payload_converter
from temporalio.converter import DataConverter

from loopwright.engines.temporal._approvals import GateDecision
from loopwright.engines.temporal._payloads import (
    AgentRunInput,
    AppendInput,
    Continued,
    EngineSettings,
    ModelCallInput,
    ModelCallResult,
    OutcomeInput,
    PrepareInput,
    RecordingPage,
    RunPlan,
    ToolCallInput,
    ToolOutcome,
    Verified,
)
from loopwright.messages import ModelResponse, ToolCall, Usage


def test_a_decision_travels_as_the_json_object_of_its_fields() -> None:
    decision = GateDecision("gate_1", True, "ops", "fine")
    wire = json.loads(json.dumps(decision.to_wire()))
    assert wire == {"gate_id": "gate_1", "approved": True, "by": "ops", "reason": "fine"}
    assert GateDecision.from_wire(wire) == decision
    assert GateDecision.from_wire({"gate_id": "g", "approved": False}) == GateDecision("g", False)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (["gate_1", True], "a JSON object"),
        ({"gate_id": "g", "approved": "yes"}, "approved (true or false)"),
        ({"approved": True}, "gate_id (a string)"),
        ({"gate_id": "g", "approved": True, "by": 7}, "by and reason are strings"),
    ],
)
def test_a_malformed_decision_is_refused(data: object, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        GateDecision.from_wire(data)


def test_a_model_call_result_reads_a_reply_recorded_before_it_was_typed() -> None:
    reply = ModelResponse("hi", (ToolCall("c1", "echo", {"text": "x"}),), Usage(3, 4), "m")
    converter = DataConverter.default.payload_converter
    for recorded in (reply.to_dict(), {**reply.to_dict(), "request_digest": "sha256:ab"}):
        [payload] = converter.to_payloads([recorded])  # what an older worker returned
        [result] = converter.from_payloads([payload], [ModelCallResult])
        assert isinstance(result, ModelCallResult)
        assert ModelResponse.from_dict(result.reply()) == reply
        assert result.request_digest == recorded.get("request_digest")
    typed = ModelCallResult.of(reply.to_dict(), None)
    [payload] = converter.to_payloads([typed])
    assert json.loads(payload.data) == {**reply.to_dict(), "request_digest": None}


def _payload_examples() -> list[object]:
    """One value of each payload dataclass a run's workflow and activities exchange, with
    nested payloads, optional fields set and unset, and JSON values of every kind."""
    spec = {"request": "x", "tools": ["echo"], "options": {"max_iterations": 6, "t": 0.5}}
    plan = RunPlan("run_1", spec, "scripted", "prompted", "ws", mcp_tools=[{"name": "m"}])
    events = [{"seq": 1, "type": "run_started", "ts": 1.5, "data": {"nested": [1, None]}}]
    message = {"role": "user", "content": "é \u0000 ok"}
    return [
        plan,
        AgentRunInput("run_1", spec, EngineSettings(), continued=Continued(plan, 4)),
        PrepareInput("run_1", spec, workspace_section=None),
        AppendInput("run_1", events),
        ModelCallInput(plan, 2, 1, 1, [message], temperature=0.0, events=events),
        ModelCallResult("hi", [{"id": "c1"}], {"input_tokens": 3}, "m", None, "sha256:ab"),
        ToolCallInput(plan, {"id": "c1", "name": "echo", "arguments": {}}, True, events),
        ToolOutcome({"content": "x", "is_error": False}, "ran"),
        OutcomeInput("run_1", {"id": "c1"}, "lost", plan=None),
        RecordingPage(events, 1, more=False),
        Verified("passed", ["a"], [], "ok"),
    ]


def test_the_workers_json_of_each_payload_is_temporals_and_reads_back_alike() -> None:
    """Byte for byte the JSON Temporal's default converter writes (recorded histories and
    other clients read it as before), read back into an equal value by both."""
    ours, temporals = worker_payload_converter(), DataConverter.default.payload_converter
    for value in _payload_examples():
        [mine] = ours.to_payloads([value])
        [theirs] = temporals.to_payloads([value])
        assert mine == theirs, type(value)
        assert ours.from_payloads([theirs], [type(value)]) == [value]
        assert temporals.from_payloads([mine], [type(value)]) == [value]


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        (PrepareInput, {"run_id": 7, "spec": {}}),  # a number for a string
        (PrepareInput, {"run_id": "r", "spec": ["x"]}),  # a list for an object
        (PrepareInput, {"spec": {}}),  # a field without a default missing
        (ToolCallInput, {"plan": {"run_id": "r"}, "call": {}, "idempotent": True}),
        (
            RunPlan,
            {
                "run_id": "r",
                "spec": {},
                "model_name": "m",
                "tool_mode": "telepathy",
                "workspace_section": "",
            },
        ),
        (AppendInput, {"run_id": "r", "events": [1]}),  # an event that is not an object
    ],
)
def test_a_payload_of_the_wrong_shape_is_refused_as_temporals_converter_refuses_it(
    kind: type, data: dict[str, object]
) -> None:
    [payload] = DataConverter.default.payload_converter.to_payloads([data])
    with pytest.raises(TypeError):
        DataConverter.default.payload_converter.from_payloads([payload], [kind])
    with pytest.raises(TypeError):
        worker_payload_converter().from_payloads([payload], [kind])


def test_a_payload_class_has_its_type_hints_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a payload does not evaluate its class's type hints again (Temporal's own
    converter evaluates them for every payload: most of a worker's conversion CPU)."""
    import temporalio.converter._payload_converter as temporal_json

    calls: list[object] = []
    original = typing.get_type_hints

    def counted(obj: object, *args: Any, **kwargs: Any) -> Any:
        calls.append(obj)
        return original(obj, *args, **kwargs)

    monkeypatch.setattr(typing, "get_type_hints", counted)
    monkeypatch.setattr(temporal_json, "get_type_hints", counted)
    converter = worker_payload_converter()
    value = _payload_examples()[4]  # a model call's input: its plan inside
    [payload] = converter.to_payloads([value])
    for _ in range(10):
        assert converter.from_payloads([payload], [ModelCallInput]) == [value]
    assert sorted(c.__name__ for c in calls) == ["ModelCallInput", "RunPlan"]  # type: ignore[attr-defined]
