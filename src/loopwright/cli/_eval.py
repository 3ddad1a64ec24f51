"""`loopwright eval FOLDER --model SPEC`: run the tool-use evaluation suite."""

from __future__ import annotations

import argparse
import asyncio
import difflib
from collections.abc import Callable
from pathlib import Path

from loopwright.cli._options import THREADS, add_options, opt
from loopwright.cli._output import print_records
from loopwright.cli._progress import Reporter
from loopwright.errors import ConfigurationError
from loopwright.evals import EvalReport, EvalSuite, EvalTask, TaskOutcome, load_suite, run_suite
from loopwright.models import Model, resolve_model
from loopwright.models._local_spec import spec_with_threads
from loopwright.testing import ScriptedModel


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("eval", help="run a tool-use evaluation suite")
    parser.add_argument("folder", help="folder with tasks.yaml (and tools.py)")
    add_options(
        parser,
        [
            opt(
                "--model",
                help="model spec; scripted:DIR uses DIR/<id>.json",
                group="model",
                default="local",
            ),
            opt(
                "--base-url",
                help="server URL of the model provider",
                group="model",
                default_text="the provider's",
            ),
            THREADS,
            opt(
                "--only",
                help="comma-separated task ids",
                group="filters",
                default="",
                default_text="every task",
            ),
            opt(
                "--report",
                help="where the JSON report is written",
                group="output",
                default="eval-report.json",
                metavar="PATH",
            ),
        ],
        None,
    )
    parser.set_defaults(handler=eval_command)


def model_chooser(spec: str, base_url: str | None) -> Callable[[EvalTask], Model]:
    prefix, _, rest = spec.partition(":")
    if prefix == "scripted" and Path(rest).is_dir():
        folder = Path(rest)
        return lambda task: ScriptedModel.from_file(folder / f"{task.id}.json", strict=False)
    shared = resolve_model(spec, base_url=base_url)
    return lambda task: shared


def print_report(report: EvalReport) -> None:
    rows = [
        [
            o.id,
            str(o.level),
            "yes" if o.passed else "no",
            str(o.iterations),
            f"{o.input_tokens + o.output_tokens:,}",
            f"{sum(o.prompt_tokens_evaluated):,}/{sum(o.prompt_tokens):,}",
            f"{o.model_s:.1f}",
            f"{o.wall_s:.1f}",
            "; ".join(o.problems),
        ]
        for o in report.outcomes
    ]
    columns = ["task", "level", "pass", "iterations", "tokens", "prompt evaluated/all"]
    print_records([*columns, "model s", "wall s", "problem"], rows)
    summary = report.to_dict()
    levels = ", ".join(f"L{k} {p}/{t}" for k, (p, t) in report.by_level().items())
    print(
        f"{report.model}: success {summary['success_rate']:.0%} "
        f"({sum(o.passed for o in report.outcomes)}/{len(report.outcomes)}), "
        f"mean iterations {summary['mean_iterations']:.1f}, tokens {summary['total_tokens']:,}, "
        f"wall {summary['wall_s']:.0f}s  [{levels}]"
    )
    mean = report.per_task()
    print(
        f"per task: {mean['wall_s']:.1f}s ({mean['model_s']:.1f}s in the model), "
        f"{mean['tokens']:,.0f} tokens: prompt {mean['prompt_tokens']:,.0f} "
        f"({mean['prompt_tokens_evaluated']:,.0f} evaluated, the rest from the prompt cache), "
        f"output {mean['output_tokens']:,.0f} ({mean['output_tokens_per_model_s']:.1f}/s)"
    )


def chosen_ids(suite: EvalSuite, only_text: str, folder: str) -> set[str] | None:
    """The task ids of `--only` (None: every task); an id the suite lacks is an error."""
    only = {i.strip() for i in only_text.split(",") if i.strip()} or None
    ids = [task.id for task in suite.tasks]
    listed = f"{', '.join(ids[:10])}{', ...' if len(ids) > 10 else ''}"
    problems = []
    for name in sorted((only or set()) - set(ids)):
        close = difflib.get_close_matches(name, ids, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        problems.append(
            f"--only {name}: no task {name!r} in {folder} ({hint}its {len(ids)} tasks: {listed})"
        )
    if problems:
        raise ConfigurationError("\n".join(problems))
    return only


def eval_command(args: argparse.Namespace) -> int:
    suite = load_suite(args.folder)
    only = chosen_ids(suite, args.only, args.folder)
    total = sum(1 for task in suite.tasks if not only or task.id in only)
    if not total:
        raise ConfigurationError(f"{args.folder}: the suite has no tasks to run")
    reporter = Reporter("eval", total, unit="tasks")

    def progress(outcome: TaskOutcome) -> None:
        mark = "✓" if outcome.passed else "✗"
        reporter.note(f"{mark} {outcome.id} ({outcome.wall_s:.1f}s)")
        reporter.advance()

    try:
        chooser = model_chooser(spec_with_threads(args.model, args.threads), args.base_url)
        report = asyncio.run(run_suite(suite, chooser, only=only, on_outcome=progress))
    finally:
        reporter.close()
    print_report(report)
    report.write_json(args.report)
    print(f"report written to {args.report}")
    return 0
