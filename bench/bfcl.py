"""BFCL v4 through loopwright and through the model's own format, scored by BFCL's checker.

    make bfcl BFCL_ARGS="--every 10"          # or, once `make bfcl-venv` has run:
    .venv/bin/python bench/bfcl.py [--categories simple_python,multiple,...]
        [--modes loopwright,native] [--every K] [--limit N] [--model local] [--threads N]
        [--calls-per-reply 8] [--out bench/results/bfcl.json] [--fresh] [--tables-only]
        [--ids simple_python_30,irrelevance_20]

The questions, their functions and the checker are BFCL's (the bfcl-eval package, in
bench/.venv-bfcl: bench/bfcl_harness/worker.py asks it). Each question runs in every mode
asked for, one after the other, their order alternated from one question to the next so
both see the same load:
- `loopwright`: a loopwright run whose tools are the question's functions, stopped at the
  first call(s) it would run (bench/bfcl_harness/loopwright_mode.py says how, and why),
  a reply allowed up to `--calls-per-reply` JSON calls on the parallel categories (one
  elsewhere);
- `loopwright-run`: the same, each call answered with a neutral result until the model
  answers (the only way a one-call-a-reply agent answers a parallel question);
- `native`: the same weights through the model's chat template with `tools=`, one reply,
  scored as BFCL's strict reader reads it and as a lenient Hermes-style reader does.
multi_turn_base runs each user turn as a follow-up on BFCL's own backends (multi_turn.py).

`--every K` takes every K-th question of each category (a stratified sample: BFCL's files
group similar questions together), `--limit N` at most N of them; the categories take turns
(the first question of each, then the second, ...), so a run stopped early covers them all.
Results are kept per question in `--out` as they come; a new invocation with the same file
runs only what is missing (`--fresh` starts over). The live_* categories are for
reporting, never tuning.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bfcl_harness.client import Bfcl, Question  # noqa: E402
from bfcl_harness.native_mode import NativeChat  # noqa: E402
from bfcl_harness.report import (  # noqa: E402
    MULTI_TURN,
    NON_LIVE,
    SCORED_MODES,
    Results,
    failure_table,
    markdown_summary,
)
from bfcl_harness.runner import MODES, run_mode  # noqa: E402

from loopwright.evals._progress import ProgressClock  # noqa: E402
from loopwright.models import resolve_model  # noqa: E402
from loopwright.models._local_spec import spec_with_threads  # noqa: E402

DEFAULT_OUT = ROOT / "bench" / "results" / "bfcl.json"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--categories", default=",".join(NON_LIVE + MULTI_TURN))
    parser.add_argument("--modes", default="loopwright,native")
    parser.add_argument("--every", type=int, default=1, help="every K-th question")
    parser.add_argument("--limit", type=int, default=0, help="at most N questions a category")
    parser.add_argument(
        "--ids", default="", help="only these questions (ids, comma-separated) of the categories"
    )
    parser.add_argument("--model", default="local")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--calls-per-reply",
        type=int,
        default=8,
        help="loopwright's max_calls_per_reply on the parallel categories (0: one JSON call "
        "a reply there too); the other categories get one call a reply",
    )
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--tables-only", action="store_true")
    args = parser.parse_args(argv)
    args.categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    args.ids = {i.strip() for i in args.ids.split(",") if i.strip()}
    unknown = [m for m in args.modes if m not in MODES]
    if unknown or args.every < 1 or args.limit < 0:
        parser.error(f"modes are {', '.join(MODES)}; --every >= 1, --limit >= 0")
    return args


def sample(questions: list[Question], every: int, limit: int) -> list[Question]:
    """Every `every`-th question from the first, at most `limit` of them (0: no limit)."""
    chosen = questions[::every]
    return chosen[:limit] if limit else chosen


def calls_per_reply(category: str, given: int) -> int | None:
    """loopwright's `max_calls_per_reply` for a question of `category`: `given` on the
    parallel categories (their questions ask for several calls at once), None (one JSON call
    a reply) elsewhere: offered on every question, the 1.5B model split multiple_0's one call
    with three flags into three calls."""
    return (given or None) if "parallel" in category else None


def interleaved(groups: list[list[Question]]) -> list[Question]:
    """The first question of each category, then the second of each, ...: a run stopped
    early has as many questions of every category."""
    longest = max((len(g) for g in groups), default=0)
    return [g[i] for i in range(longest) for g in groups if i < len(g)]


def print_tables(results: Results) -> None:
    records = results.records
    print(markdown_summary(records))
    for scored in [s for mode in SCORED_MODES.values() for s in mode]:
        if any(scored in SCORED_MODES[r["mode"]] for r in records.values()):
            print(f"\nfailure classes, {scored}:\n{failure_table(records, scored)}")


async def run(args: argparse.Namespace, results: Results) -> None:
    model = resolve_model(results.data["model"])
    chat = NativeChat(model) if "native" in args.modes else None
    with Bfcl() as bfcl:
        chosen = interleaved(
            [sample(bfcl.questions(c), args.every, args.limit) for c in args.categories]
        )
        if args.ids:
            chosen = [q for q in chosen if q.id in args.ids]
            missing = args.ids - {q.id for q in chosen}
            if missing:
                raise SystemExit(f"bench/bfcl.py: not in the sample: {sorted(missing)}")
        todo: list[tuple[str, Question]] = []
        for index, question in enumerate(chosen):  # the modes' order alternates
            modes = args.modes if index % 2 == 0 else args.modes[::-1]
            todo += [(m, question) for m in modes if not results.has(m, question.id)]
        print(f"{len(todo)} question runs to go ({len(results.records)} kept)", flush=True)
        pace = ProgressClock(len(todo), unit="runs")
        for mode, question in todo:
            started = time.perf_counter()
            calls = calls_per_reply(question.category, args.calls_per_reply)
            record = await run_mode(mode, question, model, chat, bfcl, calls)
            results.keep(mode, question.id, record)
            pace.advance()
            passed = [
                f"{s}: {'ok' if record[k]['valid'] else 'FAIL'}"
                for s in SCORED_MODES[mode]
                if (k := s.removeprefix("native-") if s.startswith("native") else "verdict")
                in record
            ]
            print(
                f"[{pace.text()}] {question.id:28} {', '.join(passed)} "
                f"({time.perf_counter() - started:.0f}s)",
                flush=True,
            )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    spec = spec_with_threads(args.model, args.threads)
    results = Results(args.out, spec, fresh=args.fresh)
    if results.data["model"] != spec and not args.tables_only:
        raise SystemExit(
            f"{args.out} holds runs of {results.data['model']!r}, not {spec!r}: "
            "give the same --model and --threads to go on, or --fresh / another --out"
        )
    if not args.tables_only:
        try:
            asyncio.run(run(args, results))
        except KeyboardInterrupt:
            print("\nstopped; the questions done are kept: run again to go on", flush=True)
    print_tables(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
