"""The tables of bench/stop_at_action.py's results (docs/benchmarks.md#stopping-at-the-action).

Each reply's generated tokens and the tokens of the part the engine uses (up to the end of
its first action, found by loopwright.parsing's `ActionEnd`), counted with the model's own
tokenizer where the adapter had no count (llama-cpp-python's server in a stream)."""

from __future__ import annotations

import json
import statistics
from functools import cache
from pathlib import Path
from typing import Any

from loopwright.models._local import resolve_local_path
from loopwright.parsing._action_end import action_end


@cache
def _vocabulary() -> Any:
    from llama_cpp import Llama

    return Llama(str(resolve_local_path("")), vocab_only=True, verbose=False)


def tokens(text: str) -> int:
    return len(_vocabulary().tokenize(text.encode(), add_bos=False)) if text else 0


def used_tokens(text: str) -> int:
    end = action_end(text)
    return tokens(text if end is None else text[:end])


def generated_tokens(reply: dict[str, Any], counted: bool) -> int:
    """The adapter's count when it had one (`counted`), else the text's tokens."""
    return int(reply["output_tokens"]) if counted else tokens(reply["text"])


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def reply_rows(runs: list[dict[str, Any]], counted: dict[str, bool]) -> dict[str, list[Any]]:
    """Per variant: (generated, used) per reply."""
    rows: dict[str, list[Any]] = {"before": [], "after": []}
    for run in runs:
        for reply in run["replies"]:
            generated = generated_tokens(reply, counted[run["variant"]])
            rows[run["variant"]].append((generated, used_tokens(reply["text"])))
    return rows


def token_table(title: str, rows: dict[str, list[Any]]) -> list[str]:
    out = [
        f"{title}:",
        "",
        "| | replies | output tokens per reply, median | p90 | tokens used, median | "
        "output / used, median | share of output thrown away |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for variant, pairs in rows.items():
        if not pairs:
            continue
        generated = [g for g, _ in pairs]
        used = [u for _, u in pairs]
        ratios = [g / u for g, u in pairs if u]
        wasted = sum(max(0, g - u) for g, u in pairs) / max(1, sum(generated))
        out.append(
            f"| {variant} | {len(pairs)} | {statistics.median(generated):g} | "
            f"{p90(generated):g} | {statistics.median(used):g} | "
            f"{statistics.median(ratios):.2f} | {wasted:.0%} |"
        )
    return [*out, ""]


def readme_tables(path: Path) -> list[str]:
    if not path.is_file():
        return []
    runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
    out = []
    for command, threads in sorted({(r["command"], r.get("threads") or 0) for r in runs}):
        mine = [r for r in runs if (r["command"], r.get("threads") or 0) == (command, threads)]
        how = f"{threads} thread(s)" if threads else "the default threads"
        out += [
            f"`{command}` command, {how}, each try (alternating; load average = `uptime`'s "
            "1-minute figure before and after the try):",
            "",
            "| try | variant | seconds | correct | load average | replies (output tokens) |",
            "|---:|---|---:|---|---|---|",
        ]
        for index, run in enumerate(mine):
            replies = ", ".join(str(r["output_tokens"]) for r in run["replies"])
            load = f"{run['load_before'][0]:.1f} -> {run['load_after'][0]:.1f}"
            out.append(
                f"| {index // 2 + 1} | {run['variant']} | {run['seconds']:.1f} | "
                f"{'yes' if run['correct'] else 'no'} | {load} | {replies} |"
            )
        out.append("")
        for variant in ("before", "after"):
            times = [r["seconds"] for r in mine if r["variant"] == variant]
            if times:
                out.append(f"- {variant}: median {statistics.median(times):.1f} s of {len(times)}")
        out.append("")
        rows = reply_rows(mine, {"before": True, "after": True})
        out += token_table(f"`{command}`, its replies (llama.cpp's own counts)", rows)
    return out


def eval_tables(path: Path) -> list[str]:
    if not path.is_file():
        return []
    runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
    tasks = sorted(
        {r["task"] for r in runs if r["variant"] == "before"}
        & {r["task"] for r in runs if r["variant"] == "after"}
    )
    paired = [r for r in runs if r["task"] in tasks]
    out = [
        f"Eval tasks run both ways: {len(tasks)} (llama-cpp-python's server, "
        f"{json.loads(path.read_text())['server']['threads']} threads).",
        "",
        "| | passed | s / task, median | s / task, mean | output tokens / task, median | "
        "load average, min-max |",
        "|---|---:|---:|---:|---:|---|",
    ]
    counted = {"before": False, "after": True}
    for variant in ("before", "after"):
        mine = [r for r in paired if r["variant"] == variant]
        seconds = [r["seconds"] for r in mine]
        per_task = [sum(generated_tokens(x, counted[variant]) for x in r["replies"]) for r in mine]
        loads = [r["load_before"][0] for r in mine] + [r["load_after"][0] for r in mine]
        out.append(
            f"| {variant} | {sum(r['passed'] for r in mine)}/{len(mine)} | "
            f"{statistics.median(seconds):.1f} | {statistics.mean(seconds):.1f} | "
            f"{statistics.median(per_task):g} | {min(loads):.1f}-{max(loads):.1f} |"
        )
    passed = {(r["task"], r["variant"]): r["passed"] for r in paired}
    lost = [t for t in tasks if passed[(t, "before")] and not passed[(t, "after")]]
    won = [t for t in tasks if passed[(t, "after")] and not passed[(t, "before")]]
    out += ["", f"- lost: {', '.join(lost) or 'none'}; won: {', '.join(won) or 'none'}", ""]
    out += token_table("Eval replies", reply_rows(paired, counted))
    return out


def peers_table(path: Path, eval_json: Path) -> list[str]:
    """smolagents on the tasks loopwright ran both ways (its tokens counted on the wire)."""
    if not path.is_file() or not eval_json.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    ran = {r["task"] for r in json.loads(eval_json.read_text(encoding="utf-8"))["runs"]}
    outcomes = [o for o in data["results"]["smolagents"]["tasks"] if o["id"] in ran]
    if not outcomes:
        return []
    seconds = [o["wall_s"] for o in outcomes]
    output = [o.get("output_tokens", 0) for o in outcomes]
    return [
        f"smolagents on the same server ({data.get('threads')} threads) and tasks, the "
        f"reference (load average after: {data.get('load_after', ['?'])[0]}):",
        "",
        "| | passed | s / task, median | s / task, mean | output tokens / task, median |",
        "|---|---:|---:|---:|---:|",
        f"| smolagents | {sum(o['passed'] for o in outcomes)}/{len(outcomes)} | "
        f"{statistics.median(seconds):.1f} | {statistics.mean(seconds):.1f} | "
        f"{statistics.median(output):g} |",
        "",
    ]


def print_tables(readme_json: Path, eval_json: Path, peers_json: Path) -> None:
    tables = [*readme_tables(readme_json), *eval_tables(eval_json)]
    print("\n".join([*tables, *peers_table(peers_json, eval_json)]))
