"""The BFCL harness (bench/bfcl.py): how a BFCL question maps onto a loopwright run, and
that its answer is scored by BFCL's own checker, on real BFCL questions with a scripted
model. The questions and the checker come from bench/.venv-bfcl (`make bfcl-venv`), through
the harness's worker process."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bfcl_harness.client import BFCL_PYTHON, Bfcl, Question, tool_call_text
from bfcl_harness.loopwright_mode import run_question
from bfcl_harness.multi_turn import loopwright_multi_turn
from bfcl_harness.native_mode import lenient_calls
from bfcl_harness.report import failure_class, shortened

from loopwright.agent import AgentOptions
from loopwright.testing import ScriptedModel

needs_bfcl = pytest.mark.skipif(
    not BFCL_PYTHON.is_file(), reason="BFCL is not installed: make bfcl-venv"
)


def action(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"thought": "call it", "action": name, "action_input": arguments})


def final(text: str) -> str:
    return json.dumps({"thought": "done", "final_answer": text})


@pytest.fixture(scope="module")
def bfcl() -> Iterator[Bfcl]:
    with Bfcl() as worker:
        yield worker


@pytest.fixture(scope="module")
def questions(bfcl: Bfcl) -> dict[str, Question]:
    found: dict[str, Question] = {}
    for category in ("simple_python", "parallel", "irrelevance", "multi_turn_base"):
        found.update({q.id: q for q in bfcl.questions(category)})
    return found


@needs_bfcl
@pytest.mark.subprocess
def test_the_checker_is_bfcls_own_and_reads_the_qwen_fc_format(
    bfcl: Bfcl, questions: dict[str, Question]
) -> None:
    where = bfcl.ask({"op": "where"})
    assert where["eval_runner"].startswith(str(ROOT / "bench" / ".venv-bfcl"))
    assert where["handler"] == "QwenFCHandler"
    question = questions["simple_python_0"]  # a triangle's area: base 10, height 5
    assert question.ground_truth == [
        {"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}
    ]
    right = {"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}
    assert bfcl.score(question, tool_call_text([right])).valid
    wrong = bfcl.score(
        question, tool_call_text([{**right, "arguments": {"base": 10, "height": 6}}])
    )
    assert (wrong.valid, wrong.error_type) == (False, "value_error:others")
    fenced = "```json\n" + json.dumps(right) + "\n```"  # what this model writes: no tags
    assert bfcl.score(question, fenced).error_type == "simple_function_checker:wrong_count"
    assert lenient_calls(fenced) == [right]


@needs_bfcl
@pytest.mark.subprocess
def test_a_run_stops_at_the_first_call_it_would_run_and_that_call_is_scored(
    bfcl: Bfcl, questions: dict[str, Question]
) -> None:
    question = questions["simple_python_1"]  # math.factorial of 5
    model = ScriptedModel(
        [
            action("math", {"number": 5}),  # the dotted name shortened: refused, not stopped at
            action("math.factorial", {"number": "five"}),  # does not fit the schema: refused
            action("math.factorial", {"number": 5}),  # stopped here, never executed
        ]
    )
    revision_7 = AgentOptions(revision=7)  # since revision 8, `math` is read as math.factorial
    ran = asyncio.run(
        run_question(model, "Calculate the factorial of 5.", question.tools, options=revision_7)
    )
    assert ran.status == "waiting"
    assert ran.calls == [{"name": "math.factorial", "arguments": {"number": 5}}]
    assert [c["name"] for c in ran.attempted] == ["math", "math.factorial", "math.factorial"]
    assert [json.loads(t)["action"] for t in ran.texts] == [c["name"] for c in ran.attempted]
    assert bfcl.score(question, tool_call_text(ran.calls)).valid
    assert shortened("math", [t["name"] for t in question.tools])


@needs_bfcl
@pytest.mark.subprocess
def test_a_shortened_dotted_name_is_the_tool_it_names_and_scores_at_once(
    bfcl: Bfcl, questions: dict[str, Question]
) -> None:
    question = questions["simple_python_1"]  # math.factorial of 5
    model = ScriptedModel([action("math", {"number": 5})])
    ran = asyncio.run(run_question(model, "Calculate the factorial of 5.", question.tools))
    assert ran.status == "waiting" and ran.model_calls == 1
    assert ran.calls == [{"name": "math.factorial", "arguments": {"number": 5}}]
    assert bfcl.score(question, tool_call_text(ran.calls)).valid


@needs_bfcl
@pytest.mark.subprocess
def test_the_stop_mapping_scores_every_call_of_a_reply_that_may_carry_several(
    bfcl: Bfcl, questions: dict[str, Question]
) -> None:
    question = questions["parallel_0"]  # two songs to play
    truth = question.ground_truth
    assert isinstance(truth, list) and len(truth) == 2
    calls = [
        {"name": name, "arguments": {k: v[0] for k, v in arguments.items() if v and v[0] != ""}}
        for entry in truth
        for name, arguments in entry.items()
    ]
    reply = "\n".join(action(c["name"], c["arguments"]) for c in calls)
    several = AgentOptions(max_calls_per_reply=8)
    ran = asyncio.run(run_question(ScriptedModel([reply]), "play", question.tools, options=several))
    assert ran.status == "waiting" and ran.model_calls == 1
    assert ran.calls == calls
    assert bfcl.score(question, tool_call_text(ran.calls)).valid
    one = asyncio.run(run_question(ScriptedModel([reply]), "play", question.tools))
    assert len(one.calls) == 1  # by default a prompted reply is read for one call
    assert not bfcl.score(question, tool_call_text(one.calls)).valid
    invented = reply + "\n" + action("close_client", {})  # not a tool: the batch ends there
    ran = asyncio.run(
        run_question(ScriptedModel([invented]), "play", question.tools, options=several)
    )
    assert ran.calls == calls and [c["name"] for c in ran.attempted][-1] == "close_client"
    assert bfcl.score(question, tool_call_text(ran.calls)).valid


@needs_bfcl
@pytest.mark.subprocess
def test_an_answer_without_a_call_is_right_on_irrelevance_and_a_call_is_not(
    bfcl: Bfcl, questions: dict[str, Question]
) -> None:
    question = questions["irrelevance_0"]  # a triangle's area, with only a BMI function
    answered = asyncio.run(
        run_question(
            ScriptedModel([final("No listed tool computes that.")]), "area?", question.tools
        )
    )
    assert (answered.status, answered.calls) == ("completed", [])
    assert bfcl.score(question, tool_call_text(answered.calls)).valid
    called = asyncio.run(
        run_question(
            ScriptedModel([action("determine_body_mass_index", {"weight": 10.0, "height": 5.0})]),
            "area?",
            question.tools,
        )
    )
    verdict = bfcl.score(question, tool_call_text(called.calls))
    assert not verdict.valid
    assert (
        failure_class(
            "irrelevance", {"valid": False}, called.calls, expected_calls=None, tool_names=[]
        )
        == "a call on an irrelevant question"
    )


@needs_bfcl
@pytest.mark.subprocess
def test_the_run_mapping_scores_every_call_of_a_parallel_question(
    bfcl: Bfcl, questions: dict[str, Question]
) -> None:
    question = questions["parallel_0"]
    truth = question.ground_truth
    assert isinstance(truth, list) and len(truth) == 2
    calls = [
        {"name": name, "arguments": {k: v[0] for k, v in arguments.items() if v and v[0] != ""}}
        for entry in truth
        for name, arguments in entry.items()
    ]
    replies = [action(c["name"], c["arguments"]) for c in calls] + [final("played both")]
    stopped = asyncio.run(run_question(ScriptedModel(replies[:1]), "play", question.tools))
    assert len(stopped.calls) == 1  # the stop mapping answers one call: too few here
    assert not bfcl.score(question, tool_call_text(stopped.calls)).valid
    ran = asyncio.run(run_question(ScriptedModel(replies), "play", question.tools, "run"))
    assert ran.calls == calls
    assert bfcl.score(question, tool_call_text(ran.calls)).valid


@needs_bfcl
@pytest.mark.subprocess
def test_a_multi_turn_question_runs_on_bfcls_backends_and_its_state_is_checked(
    bfcl: Bfcl, questions: dict[str, Question]
) -> None:
    question = questions["multi_turn_base_1"]
    steps: list[list[tuple[str, dict[str, Any]]]] = [
        [("ls", {"a": True})],
        [("cd", {"folder": "workspace"}), ("mv", {"source": "log.txt", "destination": "archive"})],
        [("cd", {"folder": "archive"}), ("grep", {"file_name": "log.txt", "pattern": "Error"})],
        [("tail", {"file_name": "log.txt", "lines": 20})],
    ]
    replies = [r for turn in steps for r in [*(action(n, a) for n, a in turn), final("done")]]
    model = ScriptedModel(replies, strict=False)  # one script for the four turns' runs
    ran = asyncio.run(loopwright_multi_turn(model, bfcl, question, "test_right"))
    assert model.remaining == 0
    assert ran["result"] == [
        [tool_call_text([{"name": n, "arguments": a}]) for n, a in turn] for turn in steps
    ]  # per turn, per model reply, the calls that reached the backends
    assert bfcl.score(question, ran["result"], tag="score_test_right").valid
    wrong = [r.replace('"archive"', '"elsewhere"') for r in replies]  # mv to a new name
    model = ScriptedModel(wrong, strict=False)
    ran = asyncio.run(loopwright_multi_turn(model, bfcl, question, "test_wrong"))
    verdict = bfcl.score(question, ran["result"], tag="score_test_wrong")
    assert not verdict.valid
    assert verdict.error_type is not None and verdict.error_type.startswith("multi_turn:")


def test_the_lenient_reader_takes_any_name_and_arguments_object() -> None:
    text = (
        'Sure.\n<tool_call>\n{"name": "a.b", "arguments": {"x": 1}}\n</tool_call>\n'
        '```json\n[{"name": "c", "arguments": "{\\"y\\": 2}"}]\n```\n'
        '{"name": "not a call"} and {"unrelated": {"name": "d", "arguments": {}}}'
    )
    assert lenient_calls(text) == [
        {"name": "a.b", "arguments": {"x": 1}},
        {"name": "c", "arguments": {"y": 2}},
        {"name": "d", "arguments": {}},
    ]
    assert lenient_calls("The answer is 42.") == []


def test_failure_classes_of_a_single_turn_question() -> None:
    names = ["uber.ride", "weather"]
    refused = [{"name": "uber", "arguments": {}}]
    no = {"valid": False, "error_type": "simple_function_checker:wrong_count"}
    assert (
        failure_class(
            "simple_python", no, [], expected_calls=1, tool_names=names, attempted=refused
        )
        == "no call: a dotted name shortened"
    )
    two = [{"name": "weather", "arguments": {}}] * 2
    assert failure_class("simple_python", no, two, expected_calls=1, tool_names=names) == (
        "extra calls"
    )
    assert (
        failure_class("parallel", no, two[:1], expected_calls=2, tool_names=names)
        == "too few calls"
    )
    assert (
        failure_class("simple_python", {"valid": True}, two[:1], expected_calls=1, tool_names=names)
        is None
    )


def test_a_sample_takes_every_kth_question_and_the_categories_take_turns() -> None:
    from bfcl import interleaved, sample

    def questions(category: str, count: int) -> list[Question]:
        return [Question(f"{category}_{i}", category, [], [], [], None) for i in range(count)]

    simple, multiple = questions("simple", 25), questions("multiple", 8)
    assert [q.id for q in sample(simple, 10, 0)] == ["simple_0", "simple_10", "simple_20"]
    assert [q.id for q in sample(simple, 10, 2)] == ["simple_0", "simple_10"]
    chosen = interleaved([sample(simple, 10, 0), sample(multiple, 10, 0)])
    assert [q.id for q in chosen] == ["simple_0", "multiple_0", "simple_10", "simple_20"]


def test_the_parallel_categories_get_several_calls_a_reply_and_the_others_one() -> None:
    from bfcl import calls_per_reply

    assert calls_per_reply("parallel", 8) == calls_per_reply("parallel_multiple", 8) == 8
    assert calls_per_reply("live_parallel", 4) == 4
    assert calls_per_reply("multiple", 8) is calls_per_reply("simple_python", 8) is None
    assert calls_per_reply("parallel", 0) is None


def test_results_are_kept_per_question_and_an_invocation_goes_on_from_them(
    tmp_path: Path,
) -> None:
    from bfcl_harness.report import Results, markdown_summary

    path = tmp_path / "bfcl.json"
    first = Results(path, "local?threads=1")
    record = {
        "id": "simple_python_0",
        "category": "simple_python",
        "mode": "loopwright",
        "verdict": {"valid": True},
        "seconds": 12.0,
        "output_tokens": 40,
        "date": "2026-12-07",
        "load": 3.5,
    }
    first.keep("loopwright", "simple_python_0", record)
    again = Results(path, "local?threads=1")
    assert again.has("loopwright", "simple_python_0")
    assert not again.has("native", "simple_python_0")
    row = "| simple_python | loopwright | 1/1 | 100% | 12.0 | 40 | 1.0 | 2026-12-07 | 3.5 |"
    assert row in markdown_summary(again.records)
    assert not Results(path, "local?threads=1", fresh=True).records
