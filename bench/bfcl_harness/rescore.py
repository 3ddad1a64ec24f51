"""Score kept loopwright records again as the harness scores them now (the calls of the
stopped reply that the run runs, `loopwright_mode.calls_run`), from the reply's calls each
record keeps; BFCL's checker unchanged. Used once, when that rule came in mid-sample:

    .venv/bin/python bench/bfcl_harness/rescore.py bench/results/bfcl-r8.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bfcl_harness.client import Bfcl, tool_call_text
from bfcl_harness.loopwright_mode import calls_run, question_tools, would_run
from bfcl_harness.report import Results, failure_class
from bfcl_harness.runner import _verdict


def main(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    results = Results(path, data["model"])
    with Bfcl() as bfcl:
        questions = {}
        for category in {r["category"] for r in results.records.values()}:
            questions.update({q.id: q for q in bfcl.questions(category)})
        for key, record in list(results.records.items()):
            if record["mode"] != "loopwright" or record.get("rescored"):
                continue
            question = questions[record["id"]]
            tools = question_tools(question.tools, lambda name: lambda **a: "")
            several = (record.get("calls_per_reply") or 1) > 1
            calls = calls_run(record["calls"], would_run(tools), batch_ends=several)
            if calls == record["calls"]:
                continue
            verdict = _verdict(bfcl.score(question, tool_call_text(calls)))
            truth = question.ground_truth
            record.update(calls=calls, verdict=verdict, rescored=True)
            record["class"] = failure_class(
                question.category,
                verdict,
                calls,
                expected_calls=len(truth) if isinstance(truth, list) else None,
                tool_names=[t["name"] for t in question.tools],
                attempted=record["attempted"],
                parse_errors=record["parse_errors"],
                status=record["status"],
            )
            results.keep(record["mode"], record["id"], record)
            print(f"{key}: {len(calls)} calls, {'ok' if verdict['valid'] else 'FAIL'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
