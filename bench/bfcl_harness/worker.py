"""BFCL's side of the benchmark: runs under bench/.venv-bfcl (bfcl-eval and what its checkers
import), never in the project's venv. One JSON request a line on stdin, one JSON reply a
line on stdout:

    {"op": "load", "category": C}                 the category's questions (BFCL's loader)
    {"op": "score", "category": C, "id": I, "result": R, "tag": T}
                                                  BFCL's own verdict on one question
    {"op": "execute", "tag": T, "id": I, "calls": [{"name", "arguments"}]}
                                                  multi-turn: the calls run on BFCL's backends
    {"op": "read_strict", "text": S}              BFCL's Qwen FC handler's reading of a reply
    {"op": "where"}                               the checker's file and the handler's name

Scoring goes through BFCL's per-question evaluators (eval_runner's `_evaluate_single_*`,
the functions its own `bfcl evaluate` calls), with the handler of its Qwen FC rows
(QwenFCHandler: calls in `<tool_call>` tags) reading `result`: the raw reply for the native
format read strictly, or the calls a mode made written in that format. Nothing here is
changed from BFCL; this file only moves data in and out.
"""

from __future__ import annotations

import copy
import json
import sys
import traceback
from typing import Any

from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
from bfcl_eval.eval_checker import eval_runner
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call
from bfcl_eval.model_handler.utils import _cast_to_openai_type, convert_to_function_call
from bfcl_eval.utils import (
    is_multi_turn,
    is_relevance_or_irrelevance,
    load_dataset_entry,
    load_ground_truth_entry,
)

SCORING_MODEL = "Qwen/Qwen3-1.7B-FC"
"""A BFCL model whose handler is QwenFCHandler and whose names keep their dots (the handler
of BFCL's Qwen FC rows; Qwen2.5's rows, no longer in this release, used the same format)."""

_entries: dict[str, dict[str, dict[str, Any]]] = {}
_answers: dict[str, dict[str, Any]] = {}
_handler = eval_runner.get_handler(SCORING_MODEL)


def tool_schema(function: dict[str, Any]) -> dict[str, Any]:
    """A BFCL function doc as JSON Schema, with BFCL's own type mapping (dict -> object,
    float -> number, tuple -> array, ...); the name keeps its dots."""
    doc = copy.deepcopy(function)
    parameters = doc["parameters"]
    parameters["type"] = "object"
    parameters["properties"] = _cast_to_openai_type(parameters["properties"], GORILLA_TO_OPENAPI)
    return {"name": doc["name"], "description": doc["description"], "parameters": parameters}


def load(category: str) -> dict[str, Any]:
    if category not in _entries:
        entries = load_dataset_entry(category)
        _entries[category] = {e["id"]: e for e in entries}
        if not is_relevance_or_irrelevance(category):
            _answers[category] = {a["id"]: a for a in load_ground_truth_entry(category)}
    answers = _answers.get(category, {})
    out = []
    for entry in _entries[category].values():
        out.append(
            {
                "id": entry["id"],
                "turns": entry["question"],
                "tools": [tool_schema(f) for f in entry["function"]],
                "involved_classes": entry.get("involved_classes", []),
                "ground_truth": answers.get(entry["id"], {}).get("ground_truth"),
            }
        )
    return {"entries": out}


def score(category: str, entry_id: str, result: Any, tag: str) -> dict[str, Any]:
    entry = copy.deepcopy(_entries[category][entry_id])
    if is_multi_turn(category):
        truth = _answers[category][entry_id]["ground_truth"]
        verdict = eval_runner._evaluate_single_multi_turn_entry(
            _handler, entry_id, result, truth, entry, tag, category
        )
    elif is_relevance_or_irrelevance(category):
        verdict = eval_runner._evaluate_single_relevance_entry(
            _handler, entry_id, result, entry, SCORING_MODEL, category
        )
    else:
        truth = _answers[category][entry_id]["ground_truth"]
        verdict = eval_runner._evaluate_single_ast_entry(
            _handler,
            entry_id,
            result,
            truth,
            entry,
            SCORING_MODEL,
            category,
            language=Language.PYTHON,
            return_format=ReturnFormat.PYTHON,
            has_tool_call_tag=False,
        )
    return {
        "valid": bool(verdict["valid"]),
        "error_type": verdict.get("error_type") or _nested_type(verdict),
        "error": verdict.get("error"),
    }


def _nested_type(verdict: dict[str, Any]) -> str | None:
    error = verdict.get("error")
    return error.get("error_type") if isinstance(error, dict) else None


def execute(tag: str, entry_id: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Run calls on the question's backends (their state kept per tag and question, in this
    process, as BFCL's own inference does)."""
    category = entry_id.rsplit("_", 1)[0]
    entry = _entries[category][entry_id]
    texts = convert_to_function_call([{c["name"]: c["arguments"]} for c in calls])
    results, _ = execute_multi_turn_func_call(
        texts,
        entry["initial_config"],
        entry["involved_classes"],
        tag,
        entry_id,
        long_context=False,
    )
    return {"results": results}


def read_strict(text: str) -> dict[str, Any]:
    try:
        calls = _handler.decode_ast(text, ReturnFormat.PYTHON, False)
    except Exception as exc:  # BFCL's decoders raise anything on text they cannot read
        return {"calls": None, "error": str(exc)[:300]}
    return {"calls": calls}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    op = request["op"]
    if op == "load":
        return load(request["category"])
    if op == "score":
        return score(request["category"], request["id"], request["result"], request["tag"])
    if op == "execute":
        return execute(request["tag"], request["id"], request["calls"])
    if op == "read_strict":
        return read_strict(request["text"])
    if op == "where":  # which checker answers: BFCL's, as installed
        return {"eval_runner": eval_runner.__file__, "handler": type(_handler).__name__}
    return {"error": f"unknown op {op!r}"}


def main() -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # what BFCL's code prints must not reach the protocol
    for line in sys.stdin:
        try:
            reply = answer(json.loads(line))
        except Exception:
            reply = {"error": traceback.format_exc(limit=5)[-2000:]}
        out.write(json.dumps(reply, default=str) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
