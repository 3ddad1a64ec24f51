"""One question in one mode: run it, score it with BFCL's checker, classify a failure."""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime
from typing import Any

from bfcl_harness.client import Bfcl, Question, Verdict, tool_call_text
from bfcl_harness.loopwright_mode import Mapping, run_question
from bfcl_harness.multi_turn import loopwright_multi_turn, native_multi_turn
from bfcl_harness.native_mode import NativeChat
from bfcl_harness.report import failure_class

from loopwright.agent import AgentOptions
from loopwright.models import Model

MODES = ("loopwright", "loopwright-run", "native")
ANSWER_CHARS = 400


def single_turn_request(question: Question) -> str:
    """The question's messages as one request (a system message, where BFCL gives one, first)."""
    return "\n\n".join(m["content"] for m in question.turns[0])


def _verdict(verdict: Verdict) -> dict[str, Any]:
    error = verdict.error
    text = json.dumps(error, default=str)[:300] if error is not None else None
    return {"valid": verdict.valid, "error_type": verdict.error_type, "error": text}


def _base(question: Question, mode: str) -> dict[str, Any]:
    """What every record says: the question, the mode, the date, the machine's load average
    (1 min) as the question started and, through loopwright, the engine's revision."""
    base = {
        "id": question.id,
        "category": question.category,
        "mode": mode,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "load": round(os.getloadavg()[0], 1),
    }
    if mode != "native":
        base["revision"] = AgentOptions().revision
    return base


def _expected(question: Question) -> int | None:
    truth = question.ground_truth
    return len(truth) if isinstance(truth, list) else None


async def run_mode(
    mode: str,
    question: Question,
    model: Model,
    chat: NativeChat | None,
    bfcl: Bfcl,
    calls_per_reply: int | None = None,
) -> dict[str, Any]:
    """The record of `question` through `mode` (loopwright, loopwright-run or native).
    `calls_per_reply`: the loopwright runs' `max_calls_per_reply` (None: one JSON call a
    prompted reply)."""
    if question.category.startswith("multi_turn"):
        return await _multi_turn(mode, question, model, chat, bfcl)
    names = [t["name"] for t in question.tools]
    record = _base(question, mode)
    if mode == "native":
        assert chat is not None
        reply = await chat.reply(question.turns[0], question.tools)
        strict = _verdict(bfcl.score(question, reply.text))
        lenient = _verdict(bfcl.score(question, tool_call_text(reply.calls)))
        record.update(reply.to_dict(), strict=strict, lenient=lenient, model_calls=1)
        for key, verdict in (("strict", strict), ("lenient", lenient)):
            calls = reply.calls if key == "lenient" else bfcl.read_strict(reply.text) or []
            record[f"{key}_class"] = failure_class(
                question.category, verdict, calls, expected_calls=_expected(question),
                tool_names=names,
            )  # fmt: skip
        if record["strict_class"] and record["strict_class"].startswith("no call") and reply.calls:
            record["strict_class"] = "no call: its calls are not in <tool_call> tags"
        return record
    mapping: Mapping = "stop" if mode == "loopwright" else "run"
    options = AgentOptions(max_calls_per_reply=calls_per_reply)
    ran = await run_question(model, single_turn_request(question), question.tools, mapping, options)
    record["calls_per_reply"] = calls_per_reply
    verdict = _verdict(bfcl.score(question, tool_call_text(ran.calls)))
    record.update(ran.to_dict(), verdict=verdict)
    record["answer"] = (ran.answer or "")[:ANSWER_CHARS] or None
    record["class"] = failure_class(
        question.category,
        verdict,
        ran.calls,
        expected_calls=_expected(question),
        tool_names=names,
        attempted=ran.attempted,
        parse_errors=ran.parse_errors,
        status=ran.status,
    )
    return record


async def _multi_turn(
    mode: str, question: Question, model: Model, chat: NativeChat | None, bfcl: Bfcl
) -> dict[str, Any]:
    tag = f"{mode.replace('-', '_')}_{uuid.uuid4().hex[:8]}"  # fresh backends for this run
    if mode == "native":
        assert chat is not None
        ran = await native_multi_turn(chat, bfcl, question, tag)
    else:
        ran = await loopwright_multi_turn(model, bfcl, question, tag)
    verdict = _verdict(bfcl.score(question, ran["result"], tag=f"score_{tag}"))
    record = _base(question, mode)
    record.update(ran)
    kind = "lenient" if mode == "native" else "verdict"
    record[kind] = verdict
    record["lenient_class" if mode == "native" else "class"] = failure_class(
        question.category, verdict, [], expected_calls=None, tool_names=[]
    )
    return record
