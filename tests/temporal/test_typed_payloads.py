"""Typed values through Temporal, each the same JSON object on the wire as before it was
typed (recorded histories replay): the decision a workflow takes (the Update `approve`, the
Signal `approve_later`: one dataclass, made and read in one place, a malformed one refused
with what is wrong) and a model call's result."""

from __future__ import annotations

import json
import re

import pytest
from temporalio.converter import DataConverter

from loopwright.engines.temporal._approvals import GateDecision
from loopwright.engines.temporal._payloads import ModelCallResult
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
