"""Results kept per question (resume), failure classes, and the summary tables."""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

NON_LIVE = ["simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance"]
MULTI_TURN = ["multi_turn_base"]
LIVE = [
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
]
SCORED_MODES = {
    "loopwright": ["loopwright"],
    "loopwright-run": ["loopwright-run"],
    "native": ["native-lenient", "native-strict"],
}
"""What each run mode is scored as (one native reply is read two ways)."""


class Results:
    """One JSON file: {"model": ..., "records": {"MODE/ID": record}}, rewritten (atomically)
    after every question, so an interrupted invocation resumes where it stopped."""

    def __init__(self, path: Path, model: str, *, fresh: bool = False) -> None:
        self.path = path
        self.data: dict[str, Any] = {"model": model, "records": {}}
        if path.is_file() and not fresh:
            self.data = json.loads(path.read_text(encoding="utf-8"))

    @property
    def records(self) -> dict[str, dict[str, Any]]:
        records: dict[str, dict[str, Any]] = self.data["records"]
        return records

    def has(self, mode: str, question_id: str) -> bool:
        return f"{mode}/{question_id}" in self.records

    def keep(self, mode: str, question_id: str, record: dict[str, Any]) -> None:
        self.records[f"{mode}/{question_id}"] = record
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.data, indent=1) + "\n", encoding="utf-8")
        os.replace(temporary, self.path)


def shortened(name: str, tool_names: list[str]) -> bool:
    """Is `name` a part of a dotted tool name (`uber` for `uber.ride`)?"""
    return any("." in t and name != t and name in t.split(".") for t in tool_names)


def failure_class(
    category: str,
    verdict: dict[str, Any],
    calls: list[dict[str, Any]],
    *,
    expected_calls: int | None,
    tool_names: list[str],
    attempted: list[dict[str, Any]] | None = None,
    parse_errors: int = 0,
    status: str = "",
) -> str | None:
    """A failed question's class, coarse enough to count (None: it passed)."""
    if verdict["valid"]:
        return None
    if category.startswith("multi_turn"):
        return str(verdict.get("error_type") or "multi_turn:other")
    if "irrelevance" in category:
        return "a call on an irrelevant question"
    if not calls:
        unknown = [a["name"] for a in attempted or () if a["name"] not in tool_names]
        if any(shortened(n, tool_names) for n in unknown):
            return "no call: a dotted name shortened"
        if unknown:
            return "no call: a tool that does not exist"
        if parse_errors:
            return "no call: a reply that could not be read"
        if status in ("stopped", "failed"):
            return f"no call: the run {status}"
        return "no call: answered instead"
    if expected_calls is not None and len(calls) > expected_calls:
        return "extra calls"
    if expected_calls is not None and len(calls) < expected_calls:
        return "too few calls"
    error_type = str(verdict.get("error_type") or "")
    if "func_name" in error_type or "wrong_count" in error_type:
        return "wrong function"
    return f"wrong arguments ({error_type.split(':')[0] or 'other'})"


def _verdict_key(scored: str) -> str:
    return scored.removeprefix("native-") if scored.startswith("native") else "verdict"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summary_rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per category and scored mode: passed, total, seconds and output tokens a question."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records.values():
        for scored in SCORED_MODES[record["mode"]]:
            if _verdict_key(scored) in record:  # multi-turn native: read leniently only
                groups[(record["category"], scored)].append(record)
    order = NON_LIVE + MULTI_TURN + LIVE
    rows = []
    for (category, scored), group in sorted(
        groups.items(),
        key=lambda kv: (order.index(kv[0][0]) if kv[0][0] in order else 99, kv[0][1]),
    ):
        verdict_key = _verdict_key(scored)
        rows.append(
            {
                "category": category,
                "mode": scored,
                "passed": sum(bool(r[verdict_key]["valid"]) for r in group),
                "total": len(group),
                "seconds": _mean([r["seconds"] for r in group]),
                "output_tokens": _mean([r["output_tokens"] for r in group]),
                "model_calls": _mean([r.get("model_calls", 1) for r in group]),
                "dates": sorted({r["date"] for r in group if "date" in r}),
                "loads": sorted(r["load"] for r in group if "load" in r),
            }
        )
    return rows


def _span(values: list[Any]) -> str:
    """`a` or `a-b` for sorted values, `?` for none (records made before they were kept)."""
    if not values:
        return "?"
    return str(values[0]) if values[0] == values[-1] else f"{values[0]}-{values[-1]}"


def markdown_summary(records: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| category | mode | passed | accuracy | s a question | output tokens a question "
        "| model calls a question | date | load |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for row in summary_rows(records):
        share = row["passed"] / row["total"] if row["total"] else 0.0
        lines.append(
            f"| {row['category']} | {row['mode']} | {row['passed']}/{row['total']} | {share:.0%} "
            f"| {row['seconds']:.1f} | {row['output_tokens']:.0f} | {row['model_calls']:.1f} "
            f"| {_span(row['dates'])} | {_span(row['loads'])} |"
        )
    return "\n".join(lines)


def failure_table(records: dict[str, dict[str, Any]], scored: str) -> str:
    """Failure classes of one scored mode: count and an example question id."""
    key = "class" if not scored.startswith("native") else scored.removeprefix("native-") + "_class"
    counts: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for record in records.values():
        if scored not in SCORED_MODES[record["mode"]]:
            continue
        found = record.get(key)
        if found:
            counts[found] += 1
            examples[found].append(record["id"])
    lines = ["| failure class | count | examples |", "| --- | ---: | --- |"]
    for name, count in counts.most_common():
        lines.append(f"| {name} | {count} | {', '.join(examples[name][:3])} |")
    return "\n".join(lines)
